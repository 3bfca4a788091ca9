struct Token {
    enum Kind: Equatable {
        case number(Value)
        case string(String)
        case identifier(String)
        case symbol(String)
        case end
    }

    let kind: Kind
    let offset: Int
    /// Whether white space came right before the token (so `. x` is not a field access).
    let spaced: Bool
}

struct Lexer {
    static let symbols = [
        "&&", "||", "==", "!=", "<=", ">=", "??", "+", "-", "*", "/", "%", "<", ">", "!", "(", ")", "[", "]", "{", "}",
        ",", ":", "?", ".",
    ]

    static func tokenize(_ text: String) throws(ExpressionSyntaxError) -> [Token] {
        let scalars = Array(text.unicodeScalars)
        var tokens: [Token] = []
        var index = 0
        var spaced = false
        func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "_" || scalar.properties.isAlphabetic
        }
        func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
            isIdentifierStart(scalar) || ("0"..."9").contains(scalar)
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
                index += 1
                spaced = true
                continue
            }
            let start = index
            if ("0"..."9").contains(scalar) {
                while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
                var isDouble = false
                if index + 1 < scalars.count, scalars[index] == ".", ("0"..."9").contains(scalars[index + 1]) {
                    isDouble = true
                    index += 1
                    while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
                }
                if index < scalars.count, scalars[index] == "e" || scalars[index] == "E" {
                    var look = index + 1
                    if look < scalars.count, scalars[look] == "+" || scalars[look] == "-" { look += 1 }
                    if look < scalars.count, ("0"..."9").contains(scalars[look]) {
                        isDouble = true
                        index = look
                        while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
                    }
                }
                let literal = String(String.UnicodeScalarView(scalars[start..<index]))
                // A duration, `30s`, `1.5m`, `250ms`: its milliseconds (times are milliseconds).
                var unitEnd = index
                while unitEnd < scalars.count, ("a"..."z").contains(scalars[unitEnd]) { unitEnd += 1 }
                let unit = String(String.UnicodeScalarView(scalars[index..<unitEnd]))
                let followed =
                    unitEnd < scalars.count
                    && (scalars[unitEnd].properties.isAlphabetic || ("0"..."9").contains(scalars[unitEnd])
                        || scalars[unitEnd] == "_")
                let factors: [String: Double] = ["ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
                if !unit.isEmpty, !followed, let factor = factors[unit], let amount = Double(literal) {
                    let milliseconds = amount * factor
                    if let int = Int(exactly: milliseconds) {
                        tokens.append(Token(kind: .number(.int(int)), offset: start, spaced: spaced))
                    } else {
                        tokens.append(Token(kind: .number(.double(milliseconds)), offset: start, spaced: spaced))
                    }
                    index = unitEnd
                    spaced = false
                    continue
                }
                if !isDouble, let int = Int(literal) {
                    tokens.append(Token(kind: .number(.int(int)), offset: start, spaced: spaced))
                } else if let double = Double(literal) {
                    tokens.append(Token(kind: .number(.double(double)), offset: start, spaced: spaced))
                } else {
                    throw ExpressionSyntaxError("invalid number '\(literal)'", offset: start)
                }
            } else if scalar == "r", index + 1 < scalars.count, scalars[index + 1] == "\"" || scalars[index + 1] == "'"
            {
                // A raw string, r'\d+': backslashes stand for themselves (regular expressions).
                let quote = scalars[index + 1]
                index += 2
                var value = String.UnicodeScalarView()
                var closed = false
                while index < scalars.count {
                    if scalars[index] == quote {
                        closed = true
                        index += 1
                        break
                    }
                    value.append(scalars[index])
                    index += 1
                }
                if !closed { throw ExpressionSyntaxError("unterminated raw string", offset: start) }
                tokens.append(Token(kind: .string(String(value)), offset: start, spaced: spaced))
            } else if scalar == "\"" || scalar == "'" {
                let quote = scalar
                index += 1
                var value = String.UnicodeScalarView()
                var closed = false
                while index < scalars.count {
                    let current = scalars[index]
                    if current == quote {
                        closed = true
                        index += 1
                        break
                    }
                    if current == "\\" {
                        guard index + 1 < scalars.count else { break }
                        let escaped = scalars[index + 1]
                        switch escaped {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        case "r": value.append("\r")
                        case "\\", "\"", "'": value.append(escaped)
                        default: throw ExpressionSyntaxError("unknown escape '\\\(escaped)' in a string", offset: index)
                        }
                        index += 2
                        continue
                    }
                    value.append(current)
                    index += 1
                }
                if !closed { throw ExpressionSyntaxError("unterminated string", offset: start) }
                tokens.append(Token(kind: .string(String(value)), offset: start, spaced: spaced))
            } else if isIdentifierStart(scalar) {
                while index < scalars.count, isIdentifierPart(scalars[index]) { index += 1 }
                let name = String(String.UnicodeScalarView(scalars[start..<index]))
                tokens.append(Token(kind: .identifier(name), offset: start, spaced: spaced))
            } else {
                var matched: String?
                for symbol in symbols {
                    let symbolScalars = Array(symbol.unicodeScalars)
                    if index + symbolScalars.count <= scalars.count,
                        Array(scalars[index..<(index + symbolScalars.count)]) == symbolScalars
                    {
                        matched = symbol
                        break
                    }
                }
                guard let matched else {
                    if scalar == "=" {
                        throw ExpressionSyntaxError("unexpected '='; compare with '=='", offset: start)
                    }
                    if scalar == "|", let hint = Self.jqPipeHint(after: scalars[(index + 1)...]) {
                        throw ExpressionSyntaxError("unexpected '|': \(hint)", offset: start)
                    }
                    if scalar == "&" || scalar == "|" {
                        throw ExpressionSyntaxError(
                            "unexpected '\(scalar)'; did you mean '\(scalar)\(scalar)'?", offset: start)
                    }
                    throw ExpressionSyntaxError("unexpected character '\(scalar)'", offset: start)
                }
                index += matched.unicodeScalars.count
                tokens.append(Token(kind: .symbol(matched), offset: start, spaced: spaced))
            }
            spaced = false
        }
        tokens.append(Token(kind: .end, offset: scalars.count, spaced: spaced))
        if tokens.count > Parser.maximumTokens {
            throw ExpressionSyntaxError(
                "expression too long: more than \(Parser.maximumTokens) parts",
                offset: tokens[Parser.maximumTokens].offset)
        }
        return tokens
    }

    /// jq's filters people write after a pipe, and the function that does the same here.
    static let jqFilters: [String: String] = [
        "tonumber": "float(x) (or int(x))", "tostring": "string(x)", "length": "len(x)",
        "ascii_downcase": "lower(x)", "ascii_upcase": "upper(x)", "keys": "keys(x)", "values": "values(x)",
        "test": "matches(s, regex)", "capture": "extract(s, regex)", "match": "extract(s, regex)",
        "sub": "replaceRegex(s, regex, replacement)", "gsub": "replaceRegex(s, regex, replacement)",
        "split": "split(s, separator) or splitRegex(s, regex)", "join": "join(list, separator)",
        "tojson": "toJSON(x)", "fromjson": "parseJSON(x)", "add": "sum(list)", "reverse": "reverse(list)",
        "floor": "floor(x)", "ceil": "ceil(x)", "round": "round(x)", "type": "type(x)", "min": "min(list)",
        "max": "max(list)", "first": "first(list)", "last": "last(list)", "not": "!x", "select": "a filter operator",
    ]

    /// For a `|` followed by a word (`| tonumber`): expressions have no pipes, and for one of jq's
    /// filters, the function to call instead; nil for anything else (`a | b`, a typo of `||`).
    static func jqPipeHint(after rest: ArraySlice<Unicode.Scalar>) -> String? {
        let word = String(
            String.UnicodeScalarView(
                rest.drop { $0 == " " }.prefix { $0.properties.isAlphabetic || $0 == "_" || ("0"..."9").contains($0) }))
        guard let function = jqFilters[word] else { return nil }
        return "expressions have no pipes (as jq's); instead of '| \(word)' call \(function) on the value"
    }
}
