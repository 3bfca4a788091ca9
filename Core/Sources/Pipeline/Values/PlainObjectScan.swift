/// The members of an object written plainly, found in one pass with the place kept in a register:
/// what almost every line of JSON Lines is. It finds exactly the members the on-demand scanner's
/// general loop finds, or gives up (nil) and leaves the text to that loop, which then reads it
/// again and says what is wrong, if anything: a key with an escape or a byte beyond ASCII, a
/// duplicate key, more members than there is room for, and anything that is not JSON.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct PlainObjectScan {
    /// How many members were found, where the object ends (past its `}`), and whether white space
    /// was met outside strings (from the text's start on, as the general loop counts it).
    let count: Int
    let end: Int
    let spaced: Bool

    /// Scans the object whose `{` is at `start` in `bytes`, writing each member's place (from
    /// `start`) into `members`; `spaced` is whether white space came before the `{`.
    @inline(never)
    static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int, spaced: Bool,
        into members: UnsafeMutableBufferPointer<RawObject.Member>
    ) -> PlainObjectScan? {
        // Places are kept as 32 bits: a text too long for them is left to the general loop. Below
        // that, no place plus one can overflow, so the arithmetic here wraps (no checks).
        guard let base = bytes.baseAddress, bytes.count &- start <= Int(UInt32.max) else { return nil }
        // A local struct, not closures over locals: its place and flag stay in registers (a
        // nested function writing a local makes every access a dynamic exclusivity check).
        var cursor = Cursor(base: base, count: bytes.count, index: start &+ 1, spaced: spaced)
        var found = 0
        guard cursor.skipSpace() else { return nil }
        if base[cursor.index] == UInt8(ascii: "}") {
            return PlainObjectScan(count: 0, end: cursor.index &+ 1, spaced: cursor.spaced)
        }
        while true {
            guard cursor.skipSpace(), base[cursor.index] == UInt8(ascii: "\"") else { return nil }
            let keyStart = cursor.index &+ 1
            guard let keyEnd = endOfPlainString(bytes, from: keyStart) else { return nil }
            cursor.index = keyEnd &+ 1
            guard cursor.skipSpace(), base[cursor.index] == UInt8(ascii: ":") else { return nil }
            cursor.index &+= 1
            guard cursor.skipSpace() else { return nil }
            let valueStart = cursor.index
            // Strings and numbers here (most values): the call for the others costs every member
            // its registers saved and restored.
            let valueEnd: Int
            switch base[valueStart] {
            case UInt8(ascii: "\""):
                guard let end = endOfPlainString(bytes, from: valueStart &+ 1) else { return nil }
                valueEnd = end &+ 1
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let number = JSONParser.numberEnd(in: bytes, from: valueStart)
                guard number.problem == nil else { return nil }
                valueEnd = number.end
            default:
                guard let end = endOfValue(bytes, at: valueStart, spaced: &cursor.spaced) else { return nil }
                valueEnd = end
            }
            cursor.index = valueEnd
            let length = keyEnd &- keyStart
            guard found < members.count else { return nil }
            for earlier in 0..<found where Int(members[earlier].keyEnd &- members[earlier].keyStart) == length {
                // A duplicate key: the general loop parses the object whole.
                if RawObject.sameBytes(base + keyStart, base + start + Int(members[earlier].keyStart), count: length) {
                    return nil
                }
            }
            members[found] = RawObject.Member(
                keyStart: UInt32(truncatingIfNeeded: keyStart &- start),
                keyEnd: UInt32(truncatingIfNeeded: keyEnd &- start),
                valueStart: UInt32(truncatingIfNeeded: valueStart &- start),
                valueEnd: UInt32(truncatingIfNeeded: valueEnd &- start))
            found &+= 1
            guard cursor.skipSpace() else { return nil }
            switch base[cursor.index] {
            case UInt8(ascii: ","): cursor.index &+= 1
            case UInt8(ascii: "}"): return PlainObjectScan(count: found, end: cursor.index &+ 1, spaced: cursor.spaced)
            default: return nil
            }
        }
    }

    /// A place in the text and whether white space was passed.
    private struct Cursor {
        let base: UnsafePointer<UInt8>
        let count: Int
        var index: Int
        var spaced: Bool

        /// Moves past white space; false at the end of the text.
        @inline(__always)
        mutating func skipSpace() -> Bool {
            while index < count {
                switch base[index] {
                case 0x20, 0x0A, 0x0D, 0x09:
                    spaced = true
                    index &+= 1
                default: return true
                }
            }
            return false
        }
    }

    /// The place of the closing quote of a string from `start` (past its opening quote) when
    /// every byte before it is ASCII and neither an escape nor a control character; else nil.
    @inline(__always)
    private static func endOfPlainString(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let index = JSONParser.Reader.firstSpecial(in: bytes, from: start)
        return index < bytes.count && bytes[index] == UInt8(ascii: "\"") ? index : nil
    }

    /// Where the value at `start` ends, when it is valid JSON: strings written plainly, numbers
    /// and literals here; nested objects and arrays by the general reader (whose white space counts
    /// in `spaced`). Nil for anything else.
    @inline(never)
    private static func endOfValue(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, spaced: inout Bool) -> Int? {
        let base = bytes.baseAddress!
        let count = bytes.count
        switch base[start] {
        case UInt8(ascii: "\""):
            return endOfPlainString(bytes, from: start + 1).map { $0 + 1 }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let scan = JSONParser.numberEnd(in: bytes, from: start)
            return scan.problem == nil ? scan.end : nil
        case UInt8(ascii: "t"): return endOfLiteral(base, count: count, from: start, "true")
        case UInt8(ascii: "f"): return endOfLiteral(base, count: count, from: start, "false")
        case UInt8(ascii: "n"): return endOfLiteral(base, count: count, from: start, "null")
        case UInt8(ascii: "{"), UInt8(ascii: "["): return endOfNested(bytes, at: start, spaced: &spaced)
        default: return nil
        }
    }

    /// Where the object or array at `start` ends, by the general reader (apart, so that the rest
    /// of `endOfValue` is inlined into the scan).
    @inline(never)
    private static func endOfNested(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, spaced: inout Bool) -> Int? {
        var reader = JSONParser.Reader(bytes: bytes)
        reader.position = start
        guard (try? reader.skipValue(depth: 1)) != nil else { return nil }
        if reader.spaced { spaced = true }
        return reader.position
    }

    /// Where `literal` ends when the text from `start` spells it; else nil.
    @inline(__always)
    private static func endOfLiteral(
        _ base: UnsafePointer<UInt8>, count: Int, from start: Int, _ literal: StaticString
    ) -> Int? {
        let length = literal.utf8CodeUnitCount
        guard start + length <= count, memcmp(base + start, literal.utf8Start, length) == 0 else { return nil }
        return start + length
    }
}
