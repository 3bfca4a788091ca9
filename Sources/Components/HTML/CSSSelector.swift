import Foundation

/// A small CSS subset turned into XPath for libxml2: tags, `.class`, `#id`, `[attr]`,
/// `[attr=value]`, and descendants (`div.results img`), with `,` for alternatives.
enum CSSSelector {
    struct SyntaxError: Error, CustomStringConvertible {
        let description: String
    }

    static func xpath(_ selector: String) throws -> String {
        let alternatives = selector.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !alternatives.contains(where: \.isEmpty), !alternatives.isEmpty else {
            throw SyntaxError(description: "selector '\(selector)' is empty")
        }
        return try alternatives.map { alternative in
            try alternative.split(whereSeparator: \.isWhitespace).map { try step(String($0), in: selector) }
                .map { "//" + $0 }.joined()
        }.joined(separator: " | ")
    }

    private static func step(_ compound: String, in selector: String) throws -> String {
        var characters = Substring(compound)
        var tag = "*"
        var predicates: [String] = []
        let nameCharacters = { (c: Character) in c.isLetter || c.isNumber || c == "-" || c == "_" }
        let head = characters.prefix(while: nameCharacters)
        if !head.isEmpty {
            tag = head.lowercased()
            characters = characters.dropFirst(head.count)
        } else if characters.first == "*" {
            characters = characters.dropFirst()
        }
        while let first = characters.first {
            switch first {
            case ".", "#":
                let name = characters.dropFirst().prefix(while: nameCharacters)
                guard !name.isEmpty else {
                    throw SyntaxError(description: "selector '\(selector)': a name after '\(first)'")
                }
                predicates.append(
                    first == "." ? "contains(concat(' ', normalize-space(@class), ' '), ' \(name) ')" : "@id='\(name)'")
                characters = characters.dropFirst(name.count + 1)
            case "[":
                guard let close = characters.firstIndex(of: "]") else {
                    throw SyntaxError(description: "selector '\(selector)': '[' without ']'")
                }
                let inside = characters[characters.index(after: characters.startIndex)..<close]
                let parts = inside.split(separator: "=", maxSplits: 1)
                let attribute = parts[0].trimmingCharacters(in: .whitespaces)
                guard !attribute.isEmpty, attribute.allSatisfy(nameCharacters) else {
                    throw SyntaxError(description: "selector '\(selector)': bad attribute '\(inside)'")
                }
                if parts.count == 2 {
                    let value = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"' "))
                    predicates.append("@\(attribute)='\(value)'")
                } else {
                    predicates.append("@\(attribute)")
                }
                characters = characters[characters.index(after: close)...]
            default:
                throw SyntaxError(
                    description:
                        "selector '\(selector)': '\(first)' is not supported (tags, .class, #id, [attr], descendants; or XPath)"
                )
            }
        }
        return tag + predicates.map { "[\($0)]" }.joined()
    }
}
