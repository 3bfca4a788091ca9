/// A string parameter with `{{ expr }}` parts, rendered against an element.
///
/// A template that is exactly one `{{ expr }}` gives the expression's value with its type (so
/// `timeline: "{{ .events }}"` passes a list); otherwise the parts are joined as text.
public struct Template {
    enum Part {
        case text(String)
        case expression(Expression)
    }

    let parts: [Part]
    /// The text it was compiled from.
    public let source: String

    /// Compiles `source`; a syntax error's offset is counted from the start of `source`.
    public init(_ source: String) throws(ExpressionSyntaxError) {
        self.source = source
        var parts: [Part] = []
        let scalars = Array(source.unicodeScalars)
        var index = 0
        var text = String.UnicodeScalarView()
        while index < scalars.count {
            if scalars[index] == "{" && index + 1 < scalars.count && scalars[index + 1] == "{" {
                // The closing '}}' is the first one outside the expression's own braces and strings.
                var end = index + 2
                var depth = 0
                var quote: Unicode.Scalar?
                while end + 1 < scalars.count {
                    let scalar = scalars[end]
                    if let open = quote {
                        if scalar == "\\" {
                            end += 1
                        } else if scalar == open {
                            quote = nil
                        }
                    } else if scalar == "'" || scalar == "\"" {
                        quote = scalar
                    } else if scalar == "{" {
                        depth += 1
                    } else if scalar == "}" {
                        if depth == 0 && scalars[end + 1] == "}" { break }
                        depth -= 1
                    }
                    end += 1
                }
                guard end + 1 < scalars.count else {
                    throw ExpressionSyntaxError("'{{' without a closing '}}'", offset: index)
                }
                if !text.isEmpty {
                    parts.append(.text(String(text)))
                    text = String.UnicodeScalarView()
                }
                let inner = String(String.UnicodeScalarView(scalars[(index + 2)..<end]))
                do {
                    parts.append(.expression(try Expression(inner)))
                } catch {
                    throw ExpressionSyntaxError(error.message, offset: index + 2 + error.offset)
                }
                index = end + 2
                continue
            }
            text.append(scalars[index])
            index += 1
        }
        if !text.isEmpty { parts.append(.text(String(text))) }
        self.parts = parts
    }

    /// Whether it has any `{{ }}` part (otherwise it is a constant string).
    @_spi(Components) public var isConstant: Bool {
        !parts.contains { if case .expression = $0 { return true } else { return false } }
    }

    /// The rendered value: typed for a lone `{{ expr }}`, a string otherwise.
    public func render(in scope: EvaluationScope) throws -> Value {
        if parts.count == 1, case .expression(let expression) = parts[0] { return try expression.evaluate(in: scope) }
        var result = ""
        for part in parts {
            switch part {
            case .text(let text): result += text
            case .expression(let expression): result += Functions.text(try expression.evaluate(in: scope))
            }
        }
        return .string(result)
    }
}
