/// Rivulet's own JSON writer: compact (JSON Lines) or indented, into a byte buffer.
public enum JSONSerializer {
    /// The value as compact JSON text.
    public static func string(_ value: Value) -> String {
        var bytes: [UInt8] = []
        write(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value as JSON indented by two spaces per level.
    @_spi(Components) public static func prettyString(_ value: Value) -> String {
        var bytes: [UInt8] = []
        writePretty(value, indent: 0, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the value as compact JSON to `bytes`.
    @_spi(Components) public static func write(_ value: Value, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let bool):
            if bool {
                bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])
            } else {
                bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
            }
        case .int(let int): writeInt(int, to: &bytes)
        case .double(let double): writeDouble(double, to: &bytes)
        case .string(let string): writeString(string, to: &bytes)
        case .array(let array):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            if let raw = object.raw {
                raw.write(to: &bytes)
                return
            }
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                writeString(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                write(member, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    static func writePretty(_ value: Value, indent: Int, to bytes: inout [UInt8]) {
        func newline(_ level: Int) {
            bytes.append(0x0A)
            bytes.append(contentsOf: repeatElement(0x20, count: level * 2))
        }
        switch value {
        case .array(let array) where !array.isEmpty:
            bytes.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                writePretty(element, indent: indent + 1, to: &bytes)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "]"))
        case .object(let object) where !object.isEmpty:
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                newline(indent + 1)
                writeString(key, to: &bytes)
                bytes.append(contentsOf: [UInt8(ascii: ":"), 0x20])
                writePretty(member, indent: indent + 1, to: &bytes)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "}"))
        default:
            write(value, to: &bytes)
        }
    }

    static func writeInt(_ value: Int, to bytes: inout [UInt8]) {
        // Digits written from the end of a small buffer, then appended at once (an append a
        // digit checks the array's room and uniqueness each time).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    static func writeDouble(_ value: Double, to bytes: inout [UInt8]) {
        guard value.isFinite else {
            bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
            return
        }
        if value.rounded() == value, abs(value) < 1e15 {
            // Whole doubles print like "2.0" in Swift; JSON readers expect "2.0" to stay a double,
            // so keep the fraction.
            writeInt(Int(value), to: &bytes)
            bytes.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0")])
            return
        }
        bytes.append(contentsOf: value.description.utf8)
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var copy = string
        copy.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30])
                    bytes.append(hexDigits[Int(byte >> 4)])
                    bytes.append(hexDigits[Int(byte & 0xF)])
                }
            }
            if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
