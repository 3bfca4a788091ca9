import Pipeline

#if canImport(Glibc)
    import Glibc
#endif

/// Where each key of an aggregate's table has its row. Text keys of ASCII characters are found by
/// their bytes, in a table of their own: read in place from a line (`Expression.withFieldText`),
/// no string is made and no string hashed for an element whose key was seen. Other keys go
/// through a dictionary of values. (ASCII text is equal exactly when its bytes are; other text
/// compares as Swift's strings do, by canonical equivalence, so it is left to them.)
struct KeyRows {
    private struct Slot {
        var hash: UInt64
        /// -1 in an empty slot.
        var row: Int
        var start: Int
        var length: Int
    }

    /// Open addressing, a power of two long, at most half full.
    private var slots: [Slot] = Array(repeating: Slot(hash: 0, row: -1, start: 0, length: 0), count: 16)
    /// The text keys' bytes, one after another.
    private var text: [UInt8] = []
    private var textKeys = 0
    private var others: [Value: Int] = [:]
    /// Seeded per table, so that keys chosen to collide cannot be written in advance.
    private let seed = UInt64.random(in: 0...UInt64.max)

    /// How many keys have a row.
    var count: Int { textKeys + others.count }

    /// The row of the text key written as `bytes` (UTF-8): nil when the text is not all ASCII
    /// (look it up as a value), `.some(nil)` when it has no row.
    func row(ofText bytes: UnsafeBufferPointer<UInt8>) -> Int?? {
        guard let hash = Self.hash(bytes, seed: seed) else { return nil }
        return .some(find(bytes, hash: hash).row)
    }

    /// The row of `key`, or nil.
    func row(of key: Value) -> Int? {
        if case .string(var string) = key {
            if let found = string.withUTF8({ row(ofText: $0) }) { return found }
        }
        return others[key]
    }

    /// Gives `key` row `row` (replacing any it had).
    mutating func set(_ key: Value, row: Int) {
        if case .string(var string) = key {
            let done = string.withUTF8 { bytes -> Bool in
                guard let hash = Self.hash(bytes, seed: seed) else { return false }
                setText(bytes, hash: hash, row: row)
                return true
            }
            if done { return }
        }
        others[key] = row
    }

    /// Forgets every key, keeping the storage.
    mutating func removeAll() {
        guard count > 0 else { return }
        for index in slots.indices { slots[index].row = -1 }
        text.removeAll(keepingCapacity: true)
        textKeys = 0
        others.removeAll(keepingCapacity: true)
    }

    /// The row of the text and the slot it is in, or the empty slot where it would go.
    private func find(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64) -> (row: Int?, slot: Int) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        return slots.withUnsafeBufferPointer { slots in
            text.withUnsafeBufferPointer { text in
                while true {
                    let candidate = slots[slot]
                    if candidate.row < 0 { return (nil, slot) }
                    if candidate.hash == hash, candidate.length == bytes.count,
                        bytes.count == 0
                            || memcmp(text.baseAddress! + candidate.start, bytes.baseAddress!, bytes.count) == 0
                    {
                        return (candidate.row, slot)
                    }
                    slot = (slot + 1) & mask
                }
            }
        }
    }

    private mutating func setText(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64, row: Int) {
        let (existing, slot) = find(bytes, hash: hash)
        if existing != nil {
            slots[slot].row = row
            return
        }
        let start = text.count
        text.append(contentsOf: bytes)
        slots[slot] = Slot(hash: hash, row: row, start: start, length: bytes.count)
        textKeys += 1
        if textKeys * 2 > slots.count { grow() }
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(hash: 0, row: -1, start: 0, length: 0), count: old.count * 2)
        let mask = slots.count - 1
        for entry in old where entry.row >= 0 {
            var slot = Int(truncatingIfNeeded: entry.hash) & mask
            while slots[slot].row >= 0 { slot = (slot + 1) & mask }
            slots[slot] = entry
        }
    }

    /// A seeded hash of ASCII text, eight bytes at a time; nil when a byte is not ASCII.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64? {
        var hash = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var high: UInt64 = 0
        var index = 0
        let base = UnsafeRawPointer(bytes.baseAddress)
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: base!.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            high |= word
            hash = (hash ^ word) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            index += 8
        }
        if index < bytes.count {
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.count {
                word |= UInt64(bytes[index]) << shift
                shift += 8
                index += 1
            }
            high |= word
            hash = (hash ^ word) &* 0xFF51_AFD7_ED55_8CCD
        }
        guard high & 0x8080_8080_8080_8080 == 0 else { return nil }
        hash ^= hash >> 33
        hash = hash &* 0xC4CE_B9FE_1A85_EC53
        return hash ^ (hash >> 33)
    }
}
