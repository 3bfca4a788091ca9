#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a `JSONObject` keeps beside its own keys and values: a key index for a large object, or
/// the bytes of a lazily read one.
class ObjectBox: @unchecked Sendable {
    /// Whether this is a `RawObject` (checked with a load rather than a dynamic cast).
    final let isRaw: Bool

    init(isRaw: Bool) {
        self.isRaw = isRaw
    }
}

/// A JSON object kept as the text it was read from, with the place of each top-level member: a
/// value is parsed only when it is asked for, and an object written out unchanged copies its
/// bytes. Made only from text already validated whole, with distinct keys free of escapes, and
/// never changed after, so it is shared across threads freely.
final class RawObject: ObjectBox, @unchecked Sendable {
    /// Where one member's key (without quotes) and value lie in `bytes`.
    struct Member {
        var keyStart: UInt32
        var keyEnd: UInt32
        var valueStart: UInt32
        var valueEnd: UInt32
    }

    /// One allocation: the members, then the bytes. Changed only by `refill`, on an object no
    /// one else holds, so reading needs no dynamic exclusivity checks.
    @exclusivity(unchecked) private var storage: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private(set) var members: UnsafeBufferPointer<Member>
    @exclusivity(unchecked) private(set) var bytes: UnsafeBufferPointer<UInt8>
    /// Whether `bytes` hold no white space outside strings (so they are written out as they are).
    @exclusivity(unchecked) private(set) var isCompact: Bool

    /// A raw object of `memberCount` members and `byteCount` bytes, which `fill` writes.
    init(
        memberCount: Int, byteCount: Int, isCompact: Bool,
        fill: (UnsafeMutableBufferPointer<Member>, UnsafeMutableBufferPointer<UInt8>) -> Void
    ) {
        capacity = max(1, memberCount * MemoryLayout<Member>.stride + byteCount)
        storage = malloc(capacity)!
        members = UnsafeBufferPointer(start: nil, count: 0)
        bytes = UnsafeBufferPointer(start: nil, count: 0)
        self.isCompact = isCompact
        super.init(isRaw: true)
        place(memberCount: memberCount, byteCount: byteCount, fill: fill)
    }

    /// Makes this object another one of `memberCount` members and `byteCount` bytes, keeping its
    /// allocation when it is large enough. Only for an object nobody else holds
    /// (`isKnownUniquelyReferenced`): a reader reuses the object of a line its pipeline dropped.
    func refill(
        memberCount: Int, byteCount: Int, isCompact: Bool,
        fill: (UnsafeMutableBufferPointer<Member>, UnsafeMutableBufferPointer<UInt8>) -> Void
    ) {
        let needed = max(1, memberCount * MemoryLayout<Member>.stride + byteCount)
        if needed > capacity {
            free(storage)
            capacity = max(needed, 2 * capacity)
            storage = malloc(capacity)!
        }
        self.isCompact = isCompact
        place(memberCount: memberCount, byteCount: byteCount, fill: fill)
    }

    private func place(
        memberCount: Int, byteCount: Int,
        fill: (UnsafeMutableBufferPointer<Member>, UnsafeMutableBufferPointer<UInt8>) -> Void
    ) {
        let memberPointer = storage.bindMemory(to: Member.self, capacity: memberCount)
        let bytePointer = (storage + memberCount * MemoryLayout<Member>.stride).bindMemory(
            to: UInt8.self, capacity: byteCount)
        fill(
            UnsafeMutableBufferPointer(start: memberPointer, count: memberCount),
            UnsafeMutableBufferPointer(start: bytePointer, count: byteCount))
        members = UnsafeBufferPointer(start: memberPointer, count: memberCount)
        bytes = UnsafeBufferPointer(start: bytePointer, count: byteCount)
    }

    deinit {
        free(storage)
    }

    /// The members and then the bytes, as they lie in the one allocation.
    var membersAndBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage, count: members.count * MemoryLayout<Member>.stride + bytes.count)
    }

    /// The position of the member named `key`, or nil.
    @inline(__always)
    func position(of key: String) -> Int? {
        Self.withBytes(of: key) { position(ofKeyBytes: $0) }
    }

    /// Calls `body` with `key`'s UTF-8 bytes, borrowed: copying the string would retain its
    /// storage, which the compiled expressions of every worker thread share.
    @inline(__always)
    static func withBytes<R>(of key: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = key.utf8.withContiguousStorageIfAvailable(body) { return result }
        var key = key
        return key.withUTF8(body)
    }

    /// Whether the `count` bytes at `a` and at `b` are the same. Keys are mostly a few bytes:
    /// compared here, short ones cost less than a call to `memcmp` (several per element).
    @inline(__always)
    static func sameBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int) -> Bool {
        guard count <= 16 else { return memcmp(a, b, count) == 0 }
        var index = 0
        while index < count {
            if a[index] != b[index] { return false }
            index += 1
        }
        return true
    }

    /// The position of the member whose key is `wanted` (UTF-8, without quotes), or nil.
    @inline(__always)
    func position(ofKeyBytes wanted: UnsafeBufferPointer<UInt8>) -> Int? {
        for position in members.indices {
            let member = members[position]
            guard Int(member.keyEnd - member.keyStart) == wanted.count else { continue }
            if wanted.isEmpty
                || Self.sameBytes(bytes.baseAddress! + Int(member.keyStart), wanted.baseAddress!, count: wanted.count)
            {
                return position
            }
        }
        return nil
    }

    /// The value of member `key` when it is an integer written plainly (digits, perhaps a minus,
    /// no fraction or exponent, at most 18 digits); nil otherwise, including when there is no such
    /// member.
    @inline(__always)
    func integer(ofMember key: String) -> Int? {
        guard let position = position(of: key) else { return nil }
        let member = members[position]
        return Self.plainInteger(in: bytes, from: Int(member.valueStart), to: Int(member.valueEnd))
    }

    /// `plainInteger` of the text from `start` to `end` in `line`, eight digits at a time: the
    /// eight bytes that end with the number (or with its first eight digits) are read as one word,
    /// those before its first digit taken as zeros (the line has them: a value never starts a
    /// line). A digit at a time, a number's length is a branch mispredicted on most elements.
    @inline(__always)
    static func plainInteger(in line: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
        let negative = line[start] == UInt8(ascii: "-")
        let first = negative ? start + 1 : start
        let digits = end - first
        guard digits > 0, digits <= 16, end >= 16 || (digits <= 8 && end >= 8) else {
            return plainInteger(UnsafeBufferPointer(rebasing: line[start..<end]))
        }
        let raw = UnsafeRawPointer(line.baseAddress!)
        let low = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self))
        let integer: Int
        if digits <= 8 {
            guard let value = eightDigits(low, leading: 8 - digits) else { return nil }
            integer = value
        } else {
            let high = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: end - 16, as: UInt64.self))
            guard let upper = eightDigits(high, leading: 16 - digits), let lower = eightDigits(low, leading: 0) else {
                return nil
            }
            integer = upper &* 100_000_000 &+ lower
        }
        return negative ? -integer : integer
    }

    /// The number the eight ASCII digits of `word` write (the first in its lowest byte), its
    /// `leading` lowest bytes taken as "0"; nil when another byte is not a digit.
    @inline(__always)
    private static func eightDigits(_ word: UInt64, leading: Int) -> Int? {
        let zeros: UInt64 = 0x3030_3030_3030_3030
        // Shifting by 64 is not defined: a mask of the bytes kept, made from the ones dropped.
        let dropped: UInt64 = leading == 0 ? 0 : ~0 >> UInt64(64 - 8 * leading)
        let text = (word & ~dropped) | (zeros & dropped)
        // Every byte 0x30...0x39: its high half 3, and still 3 once 6 is added to it.
        guard
            (text & 0xF0F0_F0F0_F0F0_F0F0) | (((text &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4)
                == 0x3333_3333_3333_3333
        else { return nil }
        var value = text &- zeros
        value = (value &* 10) &+ (value >> 8)  // pairs of digits, each in the low byte of 16 bits
        let pairs: UInt64 = 0x0000_00FF_0000_00FF
        value = (((value & pairs) &* 0x000F_4240_0000_0064) &+ (((value >> 16) & pairs) &* 0x0000_2710_0000_0001)) >> 32
        return Int(truncatingIfNeeded: value)
    }

    /// The key of the member at `position`.
    func key(at position: Int) -> String {
        let member = members[position]
        return String(
            decoding: UnsafeBufferPointer(rebasing: bytes[Int(member.keyStart)..<Int(member.keyEnd)]), as: UTF8.self)
    }

    /// The value of the member at `position`, parsed now.
    func value(at position: Int) -> Value {
        Self.parseValidated(valueText(at: position))
    }

    /// The keys, in order.
    var keys: [String] { members.indices.map(key(at:)) }

    /// The values, in order.
    var values: [Value] { members.indices.map(value(at:)) }

    /// Parses text the scan has validated already (so it cannot fail).
    static func parseValidated(_ text: UnsafeBufferPointer<UInt8>) -> Value {
        if let integer = plainInteger(text) { return .int(integer) }
        var reader = JSONParser.Reader(bytes: text)
        return (try? reader.parseValue(depth: 1)) ?? .null
    }

    /// A validated number written as at most 18 digits (with or without a minus), computed at
    /// once; nil for anything else. Most values read from a line are such (times, counts, ids),
    /// and the general parser costs several times as much. (At most 18 digits cannot overflow.)
    @inline(__always)
    static func plainInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = text.first else { return nil }
        let negative = first == UInt8(ascii: "-")
        var index = negative ? 1 : 0
        guard text.count - index > 0, text.count - index <= 18 else { return nil }
        var integer = 0
        while index < text.count {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            integer = integer &* 10 &+ Int(digit)
            index += 1
        }
        return negative ? -integer : integer
    }

    /// The value at `path` (member names, outermost first), read from the bytes without parsing
    /// what lies around it; nil when the path meets something the caller must handle itself (a
    /// value that is neither an object nor null, a key written with escapes).
    func value(atPath path: [String]) -> Value? {
        guard let first = position(of: path[0]) else { return .null }
        var range = Int(members[first].valueStart)..<Int(members[first].valueEnd)
        for name in path.dropFirst() {
            switch bytes[range.lowerBound] {
            case UInt8(ascii: "{"):
                guard let found = Self.member(name, inObjectAt: range.lowerBound, of: bytes) else { return nil }
                guard let found = found else { return .null }
                range = found
            case UInt8(ascii: "n"): return .null
            default: return nil
            }
        }
        return Self.parseValidated(UnsafeBufferPointer(rebasing: bytes[range]))
    }

    /// The range of the value of `name` in the (validated) object starting at `start`: the last
    /// such member, as parsing keeps the last of duplicates; `.some(nil)` when it has none, nil when
    /// a key holds an escape (compared only once decoded).
    static func member(_ name: String, inObjectAt start: Int, of bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>?? {
        withBytes(of: name) { member(keyBytes: $0, inObjectAt: start, of: bytes) }
    }

    private static func member(
        keyBytes wanted: UnsafeBufferPointer<UInt8>, inObjectAt start: Int, of bytes: UnsafeBufferPointer<UInt8>
    ) -> Range<Int>?? {
        var scanner = ValidatedScanner(bytes: bytes, position: start + 1)
        var found: Range<Int>? = nil
        scanner.skipWhitespace()
        if bytes[scanner.position] == UInt8(ascii: "}") { return .some(nil) }
        while true {
            scanner.skipWhitespace()
            let keyStart = scanner.position + 1
            guard let keyEnd = scanner.skipString() else { return nil }
            scanner.skipWhitespace()
            scanner.position += 1  // the colon
            scanner.skipWhitespace()
            let valueStart = scanner.position
            scanner.skipValue()
            if keyEnd - keyStart == wanted.count
                && (wanted.isEmpty
                    || sameBytes(bytes.baseAddress! + keyStart, wanted.baseAddress!, count: wanted.count))
            {
                found = valueStart..<scanner.position
            }
            scanner.skipWhitespace()
            if bytes[scanner.position] == UInt8(ascii: "}") { return .some(found) }
            scanner.position += 1  // the comma
        }
    }

    /// Appends the object as compact JSON: its bytes as they are, or without their white space.
    func write(to output: inout [UInt8]) {
        if isCompact {
            output.append(contentsOf: bytes)
        } else {
            let start = output.count
            output.append(contentsOf: repeatElement(0, count: bytes.count))
            let written = output.withUnsafeMutableBufferPointer { buffer in
                Self.copyCompact(bytes, to: buffer.baseAddress! + start)
            }
            output.removeLast(bytes.count - written)
        }
    }

    /// Copies validated JSON text to `output` without the white space outside its strings (at
    /// most `text.count` bytes); returns the number of bytes written. A nil output only counts.
    @discardableResult
    static func copyCompact(_ text: UnsafeBufferPointer<UInt8>, to output: UnsafeMutablePointer<UInt8>?) -> Int {
        var written = 0
        var runStart = 0
        var position = 0
        let count = text.count
        func flush(upTo end: Int) {
            if runStart < end {
                output?.advanced(by: written).update(from: text.baseAddress! + runStart, count: end - runStart)
                written += end - runStart
            }
        }
        while position < count {
            let byte = text[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                while text[position] != UInt8(ascii: "\"") {
                    position += text[position] == UInt8(ascii: "\\") ? 2 : 1
                }
                position += 1
            } else if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                flush(upTo: position)
                position += 1
                runStart = position
            } else {
                position += 1
            }
        }
        flush(upTo: count)
        return written
    }

    /// An object of no members: what `projecting` is called on when every key is computed.
    static let empty = RawObject(memberCount: 0, byteCount: 2, isCompact: true) { _, bytes in
        bytes[0] = UInt8(ascii: "{")
        bytes[1] = UInt8(ascii: "}")
    }

    /// A new object of `shape`'s keys, each the value of this object's member of the same source
    /// name (null when it has none): the members' text copied as it is, so numbers and strings keep
    /// their exact form.
    ///
    /// A key whose source is nil takes the next of `computed`: JSON text already written, each
    /// ending where `ends` says.
    func projecting(
        _ shape: ProjectionShape, computed: UnsafeBufferPointer<UInt8> = UnsafeBufferPointer(start: nil, count: 0),
        ends: UnsafeBufferPointer<Int> = UnsafeBufferPointer(start: nil, count: 0)
    ) -> RawObject {
        let count = shape.count
        return withUnsafeTemporaryAllocation(of: (position: Int, length: Int).self, capacity: count) { picked in
            var byteCount = 2 + max(0, count - 1)
            var computedIndex = 0
            for index in 0..<count {
                let length: Int
                guard let source = shape.source(index) else {
                    let start = computedIndex == 0 ? 0 : ends[computedIndex - 1]
                    length = ends[computedIndex] - start
                    // A computed value is told apart by a position below -1: -2 - its index.
                    picked[index] = (-2 - computedIndex, length)
                    computedIndex += 1
                    byteCount += shape.quotedKey(index).count + 1 + length
                    continue
                }
                if let position = self.position(ofKeyBytes: source) {
                    let text = valueText(at: position)
                    let container = text[0] == UInt8(ascii: "{") || text[0] == UInt8(ascii: "[")
                    length = isCompact || !container ? text.count : Self.copyCompact(text, to: nil)
                    picked[index] = (position, length)
                } else {
                    length = 4
                    picked[index] = (-1, length)
                }
                byteCount += shape.quotedKey(index).count + 1 + length
            }
            return RawObject(memberCount: count, byteCount: byteCount, isCompact: true) { made, text in
                var offset = 0
                func append(_ source: UnsafeBufferPointer<UInt8>) {
                    (text.baseAddress! + offset).update(from: source.baseAddress!, count: source.count)
                    offset += source.count
                }
                func append(_ byte: UInt8) {
                    text[offset] = byte
                    offset += 1
                }
                append(UInt8(ascii: "{"))
                for index in 0..<count {
                    if index > 0 { append(UInt8(ascii: ",")) }
                    let keyStart = offset + 1
                    append(shape.quotedKey(index))
                    let keyEnd = offset - 1
                    append(UInt8(ascii: ":"))
                    let valueStart = offset
                    let (position, length) = picked[index]
                    if position < -1 {
                        let computedIndex = -2 - position
                        let start = computedIndex == 0 ? 0 : ends[computedIndex - 1]
                        append(UnsafeBufferPointer(rebasing: computed[start..<(start + length)]))
                    } else if position < 0 {
                        for byte in [0x6E, 0x75, 0x6C, 0x6C] as [UInt8] { append(byte) }
                    } else if length == Int(members[position].valueEnd - members[position].valueStart) {
                        append(valueText(at: position))
                    } else {
                        offset += Self.copyCompact(valueText(at: position), to: text.baseAddress! + offset)
                    }
                    made[index] = Member(
                        keyStart: UInt32(keyStart), keyEnd: UInt32(keyEnd), valueStart: UInt32(valueStart),
                        valueEnd: UInt32(offset))
                }
                append(UInt8(ascii: "}"))
            }
        }
    }

    /// The text of the value of the member at `position`.
    @inline(__always)
    func valueText(at position: Int) -> UnsafeBufferPointer<UInt8> {
        let member = members[position]
        return UnsafeBufferPointer(rebasing: bytes[Int(member.valueStart)..<Int(member.valueEnd)])
    }
}

extension Value {
    /// An object's storage, not retained (the value holds it): reading through it changes no
    /// reference count. Made apart from its use, so the copy the match makes ends at once.
    @inline(__always)
    var unretainedObjectStorage: Unmanaged<ObjectBox>? {
        guard case .object(let object) = self else { return nil }
        return .passUnretained(object.storage)
    }

    /// An object read on demand, not retained (as above); nil for anything else.
    @inline(__always)
    var unretainedRawObject: Unmanaged<RawObject>? {
        guard let storage = unretainedObjectStorage, storage._withUnsafeGuaranteedRef({ $0.isRaw }) else { return nil }
        return Unmanaged<RawObject>.fromOpaque(storage.toOpaque())
    }
}
