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
    /// 16 bytes, four to a cache line: with 10,000 keys the table is 256 KB, and finding a row
    /// is mostly one load (the slot is where the time of a lookup goes: a miss of the cache).
    private struct Slot {
        /// The key's first eight bytes, zero past its end: a key of up to eight bytes is its
        /// prefix and length, and a longer one is compared with its bytes in `text` only when
        /// these match.
        var prefix: UInt64
        /// -1 in an empty slot.
        var row: Int32
        var length: UInt32
    }

    private static let empty = Slot(prefix: 0, row: -1, length: 0)
    /// Text keys longer than this many bytes go through the dictionary of values.
    private static let longest = Int(UInt32.max)

    /// Open addressing, a power of two long, at most about 3/4 full.
    private var slots: [Slot] = Array(repeating: empty, count: 16)
    /// Where each key longer than eight bytes has its bytes in `text`, by slot (0 for others).
    private var starts: [Int] = Array(repeating: 0, count: 16)
    /// The bytes of the keys longer than eight bytes, one after another.
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
        guard bytes.count <= Self.longest, let hash = Self.hash(bytes, seed: seed) else { return nil }
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
        if case .string(var string) = key, row <= Int(Int32.max) {
            let done = string.withUTF8 { bytes -> Bool in
                guard bytes.count <= Self.longest, let hash = Self.hash(bytes, seed: seed) else { return false }
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

    /// The first eight bytes of `bytes`, zero past its end.
    @inline(__always)
    private static func prefix(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let base = bytes.baseAddress else { return 0 }
        if bytes.count >= 8 { return UInt64(littleEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)) }
        return tail(base, count: bytes.count)
    }

    /// The `count` (below eight) bytes at `base` as the low bytes of a word, read in at most
    /// three loads (a byte at a time took a tenth of an aggregate's time per element).
    @inline(__always)
    private static func tail(_ base: UnsafePointer<UInt8>, count: Int) -> UInt64 {
        let raw = UnsafeRawPointer(base)
        var word: UInt64 = 0
        var offset = 0
        if count & 4 != 0 {
            word = UInt64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
            offset = 4
        }
        if count & 2 != 0 {
            word |=
                UInt64(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self))) << (8 * offset)
            offset += 2
        }
        if count & 1 != 0 { word |= UInt64(base[offset]) << (8 * offset) }
        return word
    }

    /// The row of the text and the slot it is in, or the empty slot where it would go.
    private func find(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64) -> (row: Int?, slot: Int) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        let prefix = Self.prefix(bytes)
        let length = UInt32(truncatingIfNeeded: bytes.count)
        return slots.withUnsafeBufferPointer { slots in
            while true {
                let candidate = slots[slot]
                if candidate.row < 0 { return (nil, slot) }
                if candidate.prefix == prefix, candidate.length == length,
                    bytes.count <= 8 || sameTail(bytes, at: starts[slot])
                {
                    return (Int(candidate.row), slot)
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// Whether the bytes of `bytes` past the eighth are those kept from `start` on.
    private func sameTail(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        text.withUnsafeBufferPointer { text in
            memcmp(text.baseAddress! + start + 8, bytes.baseAddress! + 8, bytes.count - 8) == 0
        }
    }

    private mutating func setText(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64, row: Int) {
        let (existing, slot) = find(bytes, hash: hash)
        if existing != nil {
            slots[slot].row = Int32(row)
            return
        }
        if bytes.count > 8 {
            starts[slot] = text.count
            text.append(contentsOf: bytes)
        }
        slots[slot] = Slot(prefix: Self.prefix(bytes), row: Int32(row), length: UInt32(bytes.count))
        textKeys += 1
        if textKeys * 4 > slots.count * 3 { grow() }
    }

    /// Twice the slots, each key moved to its place among them (by its hash, made again from its
    /// bytes: the prefix and, past eight bytes, `text`).
    private mutating func grow() {
        let (oldSlots, oldStarts) = (slots, starts)
        slots = Array(repeating: Self.empty, count: oldSlots.count * 2)
        starts = Array(repeating: 0, count: slots.count)
        let mask = slots.count - 1
        for (index, entry) in oldSlots.enumerated() where entry.row >= 0 {
            let length = Int(entry.length)
            let hash: UInt64
            if length > 8 {
                hash = text.withUnsafeBufferPointer {
                    Self.hash(
                        UnsafeBufferPointer(rebasing: $0[oldStarts[index]..<oldStarts[index] + length]), seed: seed)!
                }
            } else {
                hash = withUnsafeBytes(of: entry.prefix.littleEndian) {
                    Self.hash(UnsafeBufferPointer(rebasing: $0.bindMemory(to: UInt8.self)[0..<length]), seed: seed)!
                }
            }
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot].row >= 0 { slot = (slot + 1) & mask }
            slots[slot] = entry
            starts[slot] = oldStarts[index]
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
            let word = tail(bytes.baseAddress! + index, count: bytes.count - index)
            high |= word
            hash = (hash ^ word) &* 0xFF51_AFD7_ED55_8CCD
        }
        guard high & 0x8080_8080_8080_8080 == 0 else { return nil }
        hash ^= hash >> 33
        hash = hash &* 0xC4CE_B9FE_1A85_EC53
        return hash ^ (hash >> 33)
    }
}
