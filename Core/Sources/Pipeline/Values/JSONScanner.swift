#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension JSONParser {
    /// Parses one JSON document from `bytes` on demand: the whole text is validated (a malformed
    /// document throws exactly the error `parse` would), but an object is kept as its bytes with
    /// the place of each member, and a member's value is parsed only when it is read. Objects
    /// with keys written with escapes, duplicate keys or very many members are parsed whole.
    @_spi(Host) public static func parseOnDemand(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) -> Value {
        var fresh = Scratch()
        return try parseOnDemand(bytes, reusing: &fresh)
    }

    /// The object of the last line a reader parsed on demand, reused for the next line when nobody
    /// holds it any more (its pipeline dropped the line).
    @_spi(Host) public struct Scratch {
        var object: RawObject?
        /// Whether the object goes out in the value (moved, not shared) and comes back by
        /// `giveBack`: no reference count changes hands for a line its pipeline drops.
        let lends: Bool

        /// Holding nothing yet; with `lending`, the values it gives must be given back.
        public init(lending: Bool = false) { lends = lending }

        /// Takes back a value `parseOnDemand` gave (lending), once its holder is done with it: its
        /// object is kept for the next line when nothing else holds it.
        public mutating func giveBack(_ value: consuming Value) {
            guard lends, object == nil, case .object(let kept) = consume value else { return }
            var box = (consume kept).takeStorage()
            guard box.isRaw, isKnownUniquelyReferenced(&box) else { return }
            object = unsafeDowncast(consume box, to: RawObject.self)
        }
    }

    /// `parseOnDemand(bytes)`, keeping an object's bytes in `scratch`'s object when nobody else
    /// holds it, else in a new raw object left there: a reader that passes its own scratch
    /// allocates nothing for the lines its pipeline drops.
    @_spi(Host) public static func parseOnDemand(
        _ bytes: UnsafeBufferPointer<UInt8>, reusing scratch: inout Scratch
    ) throws(JSONError) -> Value {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        guard reader.position < bytes.count, bytes[reader.position] == UInt8(ascii: "{") else {
            return try parse(bytes)
        }
        let start = reader.position
        let limit = 64
        let scanned: Value? = try withUnsafeTemporaryAllocation(of: RawObject.Member.self, capacity: limit) {
            (members) throws(JSONError) -> Value? in
            var count = 0
            var plain = true
            if let scan = PlainObjectScan.scan(bytes, at: start, spaced: reader.spaced, into: members) {
                // Most lines: found in one pass. The general loop reads any other (and finds its errors).
                (count, reader.position, reader.spaced) = (scan.count, scan.end, scan.spaced)
            } else {
                count = try scanMembers(of: bytes, from: start, with: &reader, into: members, plain: &plain)
            }
            let end = reader.position
            let spacedInside = reader.spaced
            reader.skipWhitespace()
            if reader.position < bytes.count {
                throw JSONError(
                    "unexpected '\(reader.describe(bytes[reader.position]))' after the JSON value",
                    offset: reader.position)
            }
            guard plain else { return nil }
            let fill = {
                (target: UnsafeMutableBufferPointer<RawObject.Member>, text: UnsafeMutableBufferPointer<UInt8>) in
                _ = target.initialize(from: UnsafeBufferPointer(start: members.baseAddress, count: count))
                text.baseAddress!.update(from: bytes.baseAddress! + start, count: end - start)
            }
            return rawObject(
                memberCount: count, byteCount: end - start, isCompact: !spacedInside, reusing: &scratch, fill: fill)
        }
        if let scanned { return scanned }
        return try parse(bytes)
    }
}

extension JSONParser {
    /// The general loop over an object's members from its `{` at `start`: every error found as
    /// `parse` finds it; members kept in `members` while they are plain (`plain` false once one is
    /// not: a key with an escape, a duplicate, or more than `members` has room for). Returns how
    /// many were kept; `reader` ends past the `}`.
    static func scanMembers(
        of bytes: UnsafeBufferPointer<UInt8>, from start: Int, with reader: inout Reader,
        into members: UnsafeMutableBufferPointer<RawObject.Member>, plain: inout Bool
    ) throws(JSONError) -> Int {
        var count = 0
        reader.position = start + 1
        reader.skipSpace()
        if reader.position < bytes.count && bytes[reader.position] == UInt8(ascii: "}") {
            reader.position += 1
            return 0
        }
        while true {
            reader.skipSpace()
            try reader.checkKeyStarts()
            let keyStart = reader.position + 1
            let keyIsPlain = try reader.skipString()
            let keyEnd = reader.position - 1
            reader.skipSpace()
            try reader.passColon()
            reader.skipSpace()
            let valueStart = reader.position
            try reader.skipValue(depth: 1)
            if plain && keyIsPlain && count < members.count {
                let length = keyEnd - keyStart
                for earlier in 0..<count
                where Int(members[earlier].keyEnd - members[earlier].keyStart) == length
                    && memcmp(
                        bytes.baseAddress! + keyStart,
                        bytes.baseAddress! + start + Int(members[earlier].keyStart), length) == 0
                {
                    plain = false
                }
                members[count] = RawObject.Member(
                    keyStart: UInt32(keyStart - start), keyEnd: UInt32(keyEnd - start),
                    valueStart: UInt32(valueStart - start), valueEnd: UInt32(reader.position - start))
                count += 1
            } else {
                plain = false
            }
            reader.skipSpace()
            if try reader.passSeparator(closing: UInt8(ascii: "}")) { return count }
        }
    }
}

extension JSONParser {
    /// An object kept as its bytes, which `fill` writes: in `scratch`'s object when nothing else
    /// holds it, else in a new one left there.
    @inline(__always)
    static func rawObject(
        memberCount: Int, byteCount: Int, isCompact: Bool, reusing scratch: inout Scratch,
        fill: (UnsafeMutableBufferPointer<RawObject.Member>, UnsafeMutableBufferPointer<UInt8>) -> Void
    ) -> Value {
        // `scratch` holds the object throughout, so it is used unretained: one retain a line (the
        // value returned) rather than two and a release (atomic operations, a tenth of the parse).
        if scratch.lends {
            // The object given back is known to be held by nothing else: it goes out, moved.
            var lent: RawObject? = nil
            swap(&lent, &scratch.object)
            guard let object = consume lent else {
                return .object(
                    JSONObject(
                        raw: RawObject(memberCount: memberCount, byteCount: byteCount, isCompact: isCompact, fill: fill)
                    ))
            }
            object.refill(memberCount: memberCount, byteCount: byteCount, isCompact: isCompact, fill: fill)
            return .object(JSONObject(raw: object))
        }
        let object: Unmanaged<RawObject>
        if scratch.object != nil, isKnownUniquelyReferenced(&scratch.object) {
            object = Unmanaged.passUnretained(scratch.object.unsafelyUnwrapped)
            object._withUnsafeGuaranteedRef {
                $0.refill(memberCount: memberCount, byteCount: byteCount, isCompact: isCompact, fill: fill)
            }
        } else {
            let made = RawObject(memberCount: memberCount, byteCount: byteCount, isCompact: isCompact, fill: fill)
            object = Unmanaged.passUnretained(made)
            scratch.object = made
        }
        return .object(JSONObject(raw: object.takeUnretainedValue()))
    }
}

extension JSONParser.Reader {
    /// Skips white space, noting whether there was any.
    @inline(__always)
    mutating func skipSpace() {
        let before = position
        skipWhitespace()
        if position != before { spaced = true }
    }

    /// Checks a value and moves past it, building nothing; the errors are those of `parseValue`.
    mutating func skipValue(depth: Int) throws(JSONError) {
        guard position < bytes.count else {
            throw JSONError("unexpected end of input, expected a value", offset: position)
        }
        switch bytes[position] {
        case UInt8(ascii: "{"): try skipObject(depth: depth + 1)
        case UInt8(ascii: "["): try skipArray(depth: depth + 1)
        case UInt8(ascii: "\""): _ = try skipString()
        case UInt8(ascii: "t"): _ = try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): _ = try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): _ = try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber()
        default:
            throw JSONError("unexpected '\(describe(bytes[position]))', expected a value", offset: position)
        }
    }

    /// Checks a string and moves past it; returns whether it had no escape.
    mutating func skipString() throws(JSONError) -> Bool {
        let start = position
        // A local index, written back once: `position` lives in memory (self is inout).
        var index = start + 1
        var highBits: UInt8 = 0
        let bytes = bytes
        while true {
            index = Self.firstSpecial(in: bytes, from: index)
            guard index < bytes.count else { throw JSONError("unterminated string", offset: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                position = index + 1
                guard
                    highBits < 0x80
                        || Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[(start + 1)..<index]))
                else { throw JSONError("invalid UTF-8 in a string", offset: start) }
                return true
            }
            if byte == UInt8(ascii: "\\") {
                // Escapes are rare: the parser checks them (and the rest of the string).
                position = start
                _ = try parseString()
                return false
            }
            if byte < 0x20 { throw JSONError("unescaped control character in a string", offset: index) }
            highBits |= byte
            index += 1
        }
    }

    /// The place of the first byte from `index` on that a string must look at — a quote, a
    /// backslash, a control character or a byte of a longer character — or the end of `bytes`.
    /// Eight bytes at a time while eight remain.
    @inline(__always)
    static func firstSpecial(in bytes: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        // Wrapping arithmetic: `index` stays within the buffer, so adding 8 cannot overflow.
        var index = index
        while index &+ 8 <= bytes.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
            let special = specialBytes(in: word)
            if special != 0 { return index &+ special.trailingZeroBitCount / 8 }
            index &+= 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { return index }
            index &+= 1
        }
        return index
    }

    /// The top bit of each byte of `word` (in memory order, lowest first) that is a quote, a
    /// backslash, below 0x20 or at least 0x80. Bytes above the first flagged one may be flagged
    /// wrongly (a borrow carries), so only the lowest flag is to be read.
    @inline(__always)
    static func specialBytes(in word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func zeroBytes(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let quotes = zeroBytes(word ^ (ones &* 0x22))
        let backslashes = zeroBytes(word ^ (ones &* 0x5C))
        let controls = (word &- ones &* 0x20) & ~word & highs
        return quotes | backslashes | controls | (word & highs)
    }

    mutating func skipArray(depth: Int) throws(JSONError) {
        if depth > JSONParser.maximumDepth {
            throw JSONError("nesting deeper than \(JSONParser.maximumDepth)", offset: position)
        }
        position += 1
        skipSpace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
            position += 1
            return
        }
        while true {
            skipSpace()
            try skipValue(depth: depth)
            skipSpace()
            if try passSeparator(closing: UInt8(ascii: "]")) { return }
        }
    }

    mutating func skipObject(depth: Int) throws(JSONError) {
        if depth > JSONParser.maximumDepth {
            throw JSONError("nesting deeper than \(JSONParser.maximumDepth)", offset: position)
        }
        position += 1
        skipSpace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            skipSpace()
            try checkKeyStarts()
            _ = try skipString()
            skipSpace()
            try passColon()
            skipSpace()
            try skipValue(depth: depth)
            skipSpace()
            if try passSeparator(closing: UInt8(ascii: "}")) { return }
        }
    }

    /// Checks a number's form (the parser's rules, without computing it) and moves past it.
    mutating func skipNumber() throws(JSONError) {
        let scan = JSONParser.numberEnd(in: bytes, from: position)
        guard let problem = scan.problem else {
            position = scan.end
            return
        }
        throw JSONError("invalid number: \(problem.rawValue)", offset: scan.end)
    }
}

extension JSONParser {
    /// What is wrong with a number's form.
    enum NumberProblem: String {
        case expectedDigit = "expected a digit"
        case leadingZero = "leading zero"
        case expectedFractionDigit = "expected a digit after '.'"
        case expectedExponentDigit = "expected a digit in the exponent"
    }

    /// Where the number at `start` ends, by JSON's rules (a minus, then `0` or digits not starting
    /// with 0, then perhaps a fraction and an exponent, each with digits); or the problem and
    /// where it was found. The one statement of a number's form, for the reader and the one-pass scan.
    @inline(__always)
    static func numberEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (end: Int, problem: NumberProblem?)
    {
        let base = bytes.baseAddress!
        let count = bytes.count
        var index = start
        @inline(__always) func digitsEnd(from start: Int) -> Int {
            var end = start
            while end < count, base[end] &- UInt8(ascii: "0") < 10 { end &+= 1 }
            return end
        }
        if base[index] == UInt8(ascii: "-") { index += 1 }
        guard index < count, base[index] &- UInt8(ascii: "0") < 10 else { return (index, .expectedDigit) }
        if base[index] == UInt8(ascii: "0") {
            index += 1
            if index < count, base[index] &- UInt8(ascii: "0") < 10 { return (start, .leadingZero) }
        } else {
            index = digitsEnd(from: index + 1)
        }
        if index < count && base[index] == UInt8(ascii: ".") {
            let digits = index + 1
            index = digitsEnd(from: digits)
            guard index > digits else { return (index, .expectedFractionDigit) }
        }
        if index < count && base[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count && (base[index] == UInt8(ascii: "+") || base[index] == UInt8(ascii: "-")) { index += 1 }
            let digits = index
            index = digitsEnd(from: digits)
            guard index > digits else { return (index, .expectedExponentDigit) }
        }
        return (index, nil)
    }
}
