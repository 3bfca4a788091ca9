/// Text for XML and HTML: the JUnit report, the SVG drawing, the live view's page.
@_spi(Host) public enum XMLText {
    /// `text` escaped for an XML attribute or element (`&apos;` is `&#39;`, which HTML reads too).
    public static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            // XML 1.0 allows no other control characters than tab, newline and return.
            case "\t", "\n", "\r": escaped.unicodeScalars.append(character)
            default:
                if character.value < 0x20 { continue }
                escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
