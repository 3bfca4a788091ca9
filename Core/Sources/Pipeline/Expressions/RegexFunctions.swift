/// The functions that take a regular expression (Swift's `Regex` syntax, as Perl and PCRE write
/// it): `matches`, `extract`, `replaceRegex` and `splitRegex`. A pattern written as a literal is
/// compiled once, with the expression, and a bad one is an error at its place in the file; one
/// computed per element is compiled each time.
enum RegexFunctions {
    /// The names of the functions whose second argument is a regular expression.
    static let names: Set<String> = ["matches", "extract", "replaceRegex", "splitRegex"]

    /// `name` applied to its evaluated arguments, the pattern already compiled.
    static func apply(_ name: String, _ subject: Value, _ regex: Regex<AnyRegexOutput>, _ rest: [Value]) throws
        -> Value
    {
        guard case .string(let string) = subject else {
            throw ExpressionRuntimeError("\(name)() expects a string, got \(Operations.describe(subject))")
        }
        switch name {
        case "matches": return .bool(string.contains(regex))
        case "extract": return extract(string, regex)
        case "replaceRegex":
            guard case .string(let replacement) = rest.first else {
                throw ExpressionRuntimeError(
                    "replaceRegex() expects a string replacement, got \(Operations.describe(rest.first ?? .null))")
            }
            return .string(try replace(string, regex, with: replacement))
        default:
            return .array(
                string.split(separator: regex, omittingEmptySubsequences: false).map { .string(String($0)) })
        }
    }

    /// Why a pattern cannot be compiled.
    struct Invalid: Error {
        let message: String
    }

    /// The pattern `text` compiled, or why it cannot be.
    static func compile(_ text: String) -> Result<Regex<AnyRegexOutput>, Invalid> {
        do {
            return .success(try Regex(text))
        } catch {
            return .failure(Invalid(message: "invalid regular expression '\(text)': \(error)"))
        }
    }

    /// The first match: its named groups as an object, else its groups as a list, else the text
    /// matched; null when nothing matches (a group that took no part is null).
    static func extract(_ string: String, _ regex: Regex<AnyRegexOutput>) -> Value {
        guard let match = string.firstMatch(of: regex) else { return .null }
        let groups = match.output.dropFirst()
        if groups.isEmpty { return .string(String(match.output[0].substring ?? "")) }
        func text(_ group: AnyRegexOutput.Element) -> Value {
            group.substring.map { .string(String($0)) } ?? .null
        }
        if groups.contains(where: { $0.name != nil }) {
            var object = JSONObject()
            for group in groups {
                if let name = group.name { object[name] = text(group) }
            }
            return .object(object)
        }
        return .array(groups.map(text))
    }

    /// Every match replaced by `replacement`, in which `$0` is the match, `$1`… its groups,
    /// `${name}` a named group and `$$` a dollar sign.
    static func replace(_ string: String, _ regex: Regex<AnyRegexOutput>, with replacement: String) throws -> String {
        let parts = try ReplacementPart.parse(replacement)
        return try string.replacing(regex) { match -> String in
            var out = ""
            for part in parts {
                switch part {
                case .text(let text): out += text
                case .group(let number):
                    guard number < match.output.count else {
                        throw ExpressionRuntimeError(
                            "replaceRegex(): the replacement names group $\(number), the pattern has \(match.output.count - 1)"
                        )
                    }
                    out += match.output[number].substring.map(String.init) ?? ""
                case .named(let name):
                    guard let group = match.output[name] else {
                        throw ExpressionRuntimeError("replaceRegex(): the pattern has no group named '\(name)'")
                    }
                    out += group.substring.map(String.init) ?? ""
                }
            }
            return out
        }
    }

    /// A piece of a replacement: text as it is, or a group's text.
    enum ReplacementPart: Equatable {
        case text(String)
        case group(Int)
        case named(String)

        static func parse(_ replacement: String) throws -> [ReplacementPart] {
            var parts: [ReplacementPart] = []
            var text = ""
            var rest = Substring(replacement)
            while let dollar = rest.firstIndex(of: "$") {
                text += rest[..<dollar]
                rest = rest[rest.index(after: dollar)...]
                if rest.first == "$" {
                    text += "$"
                    rest = rest.dropFirst()
                } else if let digits = Optional(rest.prefix(while: \.isASCIIDigit)), !digits.isEmpty {
                    if !text.isEmpty { parts.append(.text(text)) }
                    text = ""
                    parts.append(.group(Int(digits) ?? 0))
                    rest = rest.dropFirst(digits.count)
                } else if rest.first == "{", let close = rest.firstIndex(of: "}") {
                    if !text.isEmpty { parts.append(.text(text)) }
                    text = ""
                    parts.append(.named(String(rest[rest.index(after: rest.startIndex)..<close])))
                    rest = rest[rest.index(after: close)...]
                } else {
                    throw ExpressionRuntimeError(
                        "replaceRegex(): '$' in a replacement is followed by a group's number, {name} or another '$'")
                }
            }
            text += rest
            if !text.isEmpty { parts.append(.text(text)) }
            return parts
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
