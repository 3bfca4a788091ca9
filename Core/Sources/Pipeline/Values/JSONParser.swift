#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A malformed JSON document: what was wrong and at which byte.
public struct JSONError: Error, Equatable, CustomStringConvertible {
    /// What was wrong.
    public let message: String
    /// The zero-based byte offset where it was found.
    public let offset: Int

    /// An error at `offset`.
    public init(_ message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// `message at byte N`.
    public var description: String { "\(message) at byte \(offset)" }
}

/// Rivulet's own JSON parser: a single pass over the bytes, no Foundation.
///
/// Full RFC 8259 JSON: escapes and surrogate pairs, strict UTF-8, integers kept as `Int` when they
/// fit (otherwise `Double`), duplicate keys (the last wins, as in most parsers), and a nesting limit.
public enum JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    @_spi(Components) public static let maximumDepth = 512

    /// Parses one JSON document from `text`.
    public static func parse(_ text: String) throws(JSONError) -> Value {
        var copy = text
        let result: Result<Value, JSONError> = copy.withUTF8 { bytes in
            do throws(JSONError) { return .success(try parse(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses one JSON document from `bytes`; only whitespace may follow it.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) -> Value {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        let value = try reader.parseValue(depth: 0)
        reader.skipWhitespace()
        if reader.position < bytes.count {
            throw JSONError(
                "unexpected '\(reader.describe(bytes[reader.position]))' after the JSON value", offset: reader.position)
        }
        return value
    }

    /// Parses one JSON document from `bytes`.
    @_spi(Components) public static func parse(_ bytes: [UInt8]) throws(JSONError) -> Value {
        let result: Result<Value, JSONError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONError) { return .success(try parse(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Where the white space starting at `position` ends.
    @inline(__always)
    static func endOfWhitespace(in bytes: UnsafeBufferPointer<UInt8>, from position: Int) -> Int {
        var position = position
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return position
            }
        }
        return position
    }

    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        /// Whether the on-demand scan met white space outside strings.
        var spaced = false

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        func describe(_ byte: UInt8) -> String {
            if byte >= 0x20 && byte < 0x7F { return String(UnicodeScalar(byte)) }
            return "\\u{\(String(byte, radix: 16))}"
        }

        @inline(__always)
        mutating func skipWhitespace() {
            position = JSONParser.endOfWhitespace(in: bytes, from: position)
        }

        /// After a member of an array (`close` is `]`) or an object (`}`): moves past a ',' and
        /// returns false, or past `close` and returns true; anything else is an error.
        @inline(__always)
        mutating func passSeparator(closing close: UInt8) throws(JSONError) -> Bool {
            let container = close == UInt8(ascii: "]") ? "an array" : "an object"
            guard position < bytes.count else {
                throw JSONError("unexpected end of input in \(container)", offset: position)
            }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
                return false
            case close:
                position += 1
                return true
            default:
                throw JSONError(
                    "expected ',' or '\(describe(close))' in \(container), found '\(describe(bytes[position]))'",
                    offset: position)
            }
        }

        /// At an object's member: checks that its key (a string) starts here.
        @inline(__always)
        func checkKeyStarts() throws(JSONError) {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                if position >= bytes.count {
                    throw JSONError("unexpected end of input in an object", offset: position)
                }
                throw JSONError(
                    "expected a string key in an object, found '\(describe(bytes[position]))'", offset: position)
            }
        }

        /// After an object's key: moves past the ':' that must come next.
        @inline(__always)
        mutating func passColon() throws(JSONError) {
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw JSONError("expected ':' after an object key", offset: position)
            }
            position += 1
        }

        mutating func parseValue(depth: Int) throws(JSONError) -> Value {
            guard position < bytes.count else {
                throw JSONError("unexpected end of input, expected a value", offset: position)
            }
            switch bytes[position] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
            case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
            case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
            case UInt8(ascii: "n"): return try parseLiteral("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            default:
                throw JSONError("unexpected '\(describe(bytes[position]))', expected a value", offset: position)
            }
        }

        mutating func parseLiteral(_ word: StaticString, _ value: Value) throws(JSONError) -> Value {
            let count = word.utf8CodeUnitCount
            let start = position
            guard position + count <= bytes.count else {
                throw JSONError("invalid literal, expected '\(word)'", offset: start)
            }
            for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] {
                throw JSONError("invalid literal, expected '\(word)'", offset: start)
            }
            position += count
            return value
        }

        mutating func parseArray(depth: Int) throws(JSONError) -> Value {
            if depth > JSONParser.maximumDepth {
                throw JSONError("nesting deeper than \(JSONParser.maximumDepth)", offset: position)
            }
            position += 1
            var elements: [Value] = []
            skipWhitespace()
            if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth))
                skipWhitespace()
                if try passSeparator(closing: UInt8(ascii: "]")) { return .array(elements) }
            }
        }

        mutating func parseObject(depth: Int) throws(JSONError) -> Value {
            if depth > JSONParser.maximumDepth {
                throw JSONError("nesting deeper than \(JSONParser.maximumDepth)", offset: position)
            }
            position += 1
            skipWhitespace()
            if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(JSONObject())
            }
            // Members gathered here and handed to the object once: a repeated key keeps its first
            // place and its last value.
            var keys: [String] = []
            var values: [Value] = []
            var positions: [String: Int]?  // for a large object, where a scan for repeats would be slow
            keys.reserveCapacity(4)
            values.reserveCapacity(4)
            while true {
                skipWhitespace()
                try checkKeyStarts()
                let key = try parseString()
                skipWhitespace()
                try passColon()
                skipWhitespace()
                let value = try parseValue(depth: depth)
                if let repeated = positions != nil ? positions![key] : keys.firstIndex(of: key) {
                    values[repeated] = value
                } else {
                    keys.append(key)
                    values.append(value)
                    if positions != nil {
                        positions![key] = keys.count - 1
                    } else if keys.count > JSONObject.indexThreshold {
                        positions = Dictionary(uniqueKeysWithValues: zip(keys, keys.indices))
                    }
                }
                skipWhitespace()
                if try passSeparator(closing: UInt8(ascii: "}")) {
                    return .object(JSONObject(distinctKeys: keys, values: values, positions: positions))
                }
            }
        }

        mutating func parseString() throws(JSONError) -> String {
            let start = position
            position += 1
            let contentStart = position
            var highBits: UInt8 = 0
            // Fast path: no escapes.
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: bytes[contentStart..<position])
                    position += 1
                    // ASCII needs no validation; anything else is checked here, so the (specialized)
                    // decoding below never has to repair.
                    guard highBits < 0x80 || Self.isValidUTF8(slice) else {
                        throw JSONError("invalid UTF-8 in a string", offset: start)
                    }
                    return String(decoding: slice, as: UTF8.self)
                }
                highBits |= byte
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw JSONError("unescaped control character in a string", offset: position) }
                position += 1
            }
            guard position < bytes.count else { throw JSONError("unterminated string", offset: start) }
            var buffer = Array(UnsafeBufferPointer(rebasing: bytes[contentStart..<position]))
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    guard buffer.withUnsafeBufferPointer(Self.isValidUTF8) else {
                        throw JSONError("invalid UTF-8 in a string", offset: start)
                    }
                    return String(decoding: buffer, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    position += 1
                    guard position < bytes.count else { throw JSONError("unterminated string", offset: start) }
                    let escape = bytes[position]
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""): buffer.append(0x22)
                    case UInt8(ascii: "\\"): buffer.append(0x5C)
                    case UInt8(ascii: "/"): buffer.append(0x2F)
                    case UInt8(ascii: "b"): buffer.append(0x08)
                    case UInt8(ascii: "f"): buffer.append(0x0C)
                    case UInt8(ascii: "n"): buffer.append(0x0A)
                    case UInt8(ascii: "r"): buffer.append(0x0D)
                    case UInt8(ascii: "t"): buffer.append(0x09)
                    case UInt8(ascii: "u"):
                        let scalar = try parseUnicodeEscape()
                        buffer.append(contentsOf: Array(String(Character(scalar)).utf8))
                    default:
                        throw JSONError("invalid escape '\\\(describe(escape))'", offset: position - 2)
                    }
                default:
                    if byte < 0x20 { throw JSONError("unescaped control character in a string", offset: position) }
                    buffer.append(byte)
                    position += 1
                }
            }
            throw JSONError("unterminated string", offset: start)
        }

        /// Whether `bytes` are well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
        static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            var index = 0
            let count = bytes.count
            while index < count {
                let lead = bytes[index]
                if lead < 0x80 {
                    index += 1
                    continue
                }
                let length: Int
                var lower: UInt8 = 0x80
                var upper: UInt8 = 0xBF
                switch lead {
                case 0xC2...0xDF: length = 2
                case 0xE0:
                    length = 3
                    lower = 0xA0
                case 0xE1...0xEC, 0xEE...0xEF: length = 3
                case 0xED:
                    length = 3
                    upper = 0x9F
                case 0xF0:
                    length = 4
                    lower = 0x90
                case 0xF1...0xF3: length = 4
                case 0xF4:
                    length = 4
                    upper = 0x8F
                default: return false
                }
                guard index + length <= count else { return false }
                let second = bytes[index + 1]
                guard second >= lower && second <= upper else { return false }
                for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return false }
                index += length
            }
            return true
        }

        mutating func parseHex4() throws(JSONError) -> UInt32 {
            guard position + 4 <= bytes.count else { throw JSONError("incomplete \\u escape", offset: position - 2) }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw JSONError("invalid hex digit in a \\u escape", offset: position)
                }
                value = value * 16 + digit
                position += 1
            }
            return value
        }

        mutating func parseUnicodeEscape() throws(JSONError) -> Unicode.Scalar {
            let escapeStart = position - 2
            let first = try parseHex4()
            if first >= 0xD800 && first < 0xDC00 {
                guard position + 6 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw JSONError("unpaired high surrogate in a \\u escape", offset: escapeStart) }
                position += 2
                let second = try parseHex4()
                guard second >= 0xDC00 && second < 0xE000 else {
                    throw JSONError("invalid low surrogate in a \\u escape", offset: escapeStart)
                }
                let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                return Unicode.Scalar(combined)!
            }
            if first >= 0xDC00 && first < 0xE000 {
                throw JSONError("unpaired low surrogate in a \\u escape", offset: escapeStart)
            }
            return Unicode.Scalar(first)!
        }

        mutating func parseNumber() throws(JSONError) -> Value {
            // Its form checked by the one statement of it (`numberEnd`), then its value.
            let start = position
            try skipNumber()
            if let integer = Self.integer(UnsafeBufferPointer(rebasing: bytes[start..<position])) {
                return .int(integer)
            }
            return .double(parseDouble(start..<position))
        }

        /// The integer a number's text (of JSON's form) writes, when it has no fraction or exponent
        /// and fits an `Int`; else nil.
        static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
            let negative = text[0] == UInt8(ascii: "-")
            var integer = 0
            for byte in text[(negative ? 1 : 0)...] {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                let (times10, o1) = integer.multipliedReportingOverflow(by: 10)
                let (sum, o2) =
                    negative
                    ? times10.subtractingReportingOverflow(Int(digit)) : times10.addingReportingOverflow(Int(digit))
                guard !o1 && !o2 else { return nil }
                integer = sum
            }
            return integer
        }

        func parseDouble(_ range: Range<Int>) -> Double {
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: range.count + 1) { buffer in
                for (offset, index) in range.enumerated() { buffer[offset] = CChar(bitPattern: bytes[index]) }
                buffer[range.count] = 0
                // Beyond Double's range (1e400) is the largest finite double, as jq reads it:
                // infinity has no JSON form, and writing it back as null would change the data.
                let value = strtod(buffer.baseAddress!, nil)
                return value.isFinite ? value : (value < 0 ? -.greatestFiniteMagnitude : .greatestFiniteMagnitude)
            }
        }
    }
}
