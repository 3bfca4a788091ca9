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

        /// Holding nothing yet.
        public init() {}
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
            reader.position += 1
            reader.skipSpace()
            if reader.position < bytes.count && bytes[reader.position] == UInt8(ascii: "}") {
                reader.position += 1
            } else {
                members: while true {
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
                    if plain && keyIsPlain && count < limit {
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
                    if try reader.passSeparator(closing: UInt8(ascii: "}")) { break members }
                }
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
    /// An object kept as its bytes, which `fill` writes: in `scratch`'s object when nothing else
    /// holds it, else in a new one left there.
    @inline(__always)
    static func rawObject(
        memberCount: Int, byteCount: Int, isCompact: Bool, reusing scratch: inout Scratch,
        fill: (UnsafeMutableBufferPointer<RawObject.Member>, UnsafeMutableBufferPointer<UInt8>) -> Void
    ) -> Value {
        let object: RawObject
        if scratch.object != nil, isKnownUniquelyReferenced(&scratch.object) {
            object = scratch.object!
            object.refill(memberCount: memberCount, byteCount: byteCount, isCompact: isCompact, fill: fill)
        } else {
            object = RawObject(memberCount: memberCount, byteCount: byteCount, isCompact: isCompact, fill: fill)
            scratch.object = object
        }
        return .object(JSONObject(raw: object))
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
        position += 1
        var highBits: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                guard
                    highBits < 0x80
                        || Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(position - 1)]))
                else { throw JSONError("invalid UTF-8 in a string", offset: start) }
                return true
            }
            if byte == UInt8(ascii: "\\") {
                // Escapes are rare: the parser checks them (and the rest of the string).
                position = start
                _ = try parseString()
                return false
            }
            if byte < 0x20 { throw JSONError("unescaped control character in a string", offset: position) }
            highBits |= byte
            position += 1
        }
        throw JSONError("unterminated string", offset: start)
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
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") else {
            throw JSONError("invalid number: expected a digit", offset: position)
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                throw JSONError("invalid number: leading zero", offset: start)
            }
        } else {
            skipDigits()
        }
        if position < bytes.count && bytes[position] == UInt8(ascii: ".") {
            position += 1
            let digitsStart = position
            skipDigits()
            if position == digitsStart {
                throw JSONError("invalid number: expected a digit after '.'", offset: position)
            }
        }
        if position < bytes.count && (bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E")) {
            position += 1
            if position < bytes.count && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-"))
            {
                position += 1
            }
            let digitsStart = position
            skipDigits()
            if position == digitsStart {
                throw JSONError("invalid number: expected a digit in the exponent", offset: position)
            }
        }
    }

    @inline(__always)
    mutating func skipDigits() {
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            position += 1
        }
    }
}
