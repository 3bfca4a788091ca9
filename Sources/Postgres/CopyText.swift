/// COPY's text format: a row a line, its fields separated by tabs, NULL as `\N`, and a backslash,
/// tab, newline or carriage return inside a value written as a backslash escape.
public enum CopyText {
    /// Appends `row` as one line of COPY's text format to `buffer`.
    public static func append(_ row: [String?], to buffer: inout [UInt8]) {
        for (index, value) in row.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: "\t")) }
            guard var text = value else {
                buffer.append(UInt8(ascii: "\\"))
                buffer.append(UInt8(ascii: "N"))
                continue
            }
            text.withUTF8 { bytes in
                // Most values hold nothing to escape: copied whole.
                guard bytes.contains(where: { $0 == UInt8(ascii: "\\") || $0 < 0x20 }) else {
                    buffer.append(contentsOf: bytes)
                    return
                }
                for byte in bytes {
                    switch byte {
                    case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                    case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                    case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                    case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                    default: buffer.append(byte)
                    }
                }
            }
        }
        buffer.append(UInt8(ascii: "\n"))
    }
}
