/// Walks JSON text known to be valid, without checking it again.
struct ValidatedScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int

    @inline(__always)
    mutating func skipWhitespace() {
        position = JSONParser.endOfWhitespace(in: bytes, from: position)
    }

    /// Skips a string; returns where its content ends, or nil if it holds an escape.
    mutating func skipString() -> Int? {
        position += 1
        var escaped = false
        while bytes[position] != UInt8(ascii: "\"") {
            if bytes[position] == UInt8(ascii: "\\") {
                escaped = true
                position += 2
            } else {
                position += 1
            }
        }
        let end = position
        position += 1
        return escaped ? nil : end
    }

    mutating func skipValue() {
        switch bytes[position] {
        case UInt8(ascii: "\""):
            _ = skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            repeat {
                switch bytes[position] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    position += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    position += 1
                case UInt8(ascii: "\""): _ = skipString()
                default: position += 1
                }
            } while depth > 0
        default:
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: return
                default: position += 1
                }
            }
        }
    }
}
