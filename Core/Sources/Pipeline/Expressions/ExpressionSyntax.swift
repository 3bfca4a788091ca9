/// A syntax error in an expression, at a column offset inside the expression's text.
public struct ExpressionSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// The zero-based offset, in characters, inside the expression text.
    public let offset: Int

    /// An error at `offset`.
    public init(_ message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// `message (at offset N)`.
    public var description: String { "\(message) (at offset \(offset))" }
}

/// An error while evaluating an expression on an element: a wrong type, a bad argument.
public struct ExpressionRuntimeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// The parsed form of an expression.
indirect enum ExpressionNode {
    case literal(Value)
    case element
    case accumulator
    case member(ExpressionNode, String, offset: Int)
    case index(ExpressionNode, ExpressionNode, offset: Int)
    case unary(String, ExpressionNode, offset: Int)
    case binary(String, ExpressionNode, ExpressionNode, offset: Int)
    case conditional(ExpressionNode, ExpressionNode, ExpressionNode)
    case call(String, [ExpressionNode], offset: Int)
    case array([ExpressionNode])
    case object([(String, ExpressionNode)])
}

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
}

/// A Pratt parser from tokens to `ExpressionNode`s.
struct Parser {
    /// Bounds that keep the recursive parser, compiler and evaluator within the stack: the
    /// depth of the tree, to which parentheses, brackets, unary operators, conditionals and each
    /// operator of a chain (`a + b + c`) add a level.
    static let maximumTokens = 4096
    static let maximumNesting = 256

    var tokens: [Token]
    var position = 0
    var nesting = 0

    /// Enters one level of nesting.
    mutating func enter() throws(ExpressionSyntaxError) {
        nesting += 1
        if nesting > Self.maximumNesting {
            throw ExpressionSyntaxError(
                "expression nested more than \(Self.maximumNesting) levels deep", offset: current.offset)
        }
    }

    var current: Token { tokens[position] }

    mutating func advance() -> Token {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(let s) = current.kind { return s == symbol }
        return false
    }

    func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name) = current.kind { return name == word }
        return false
    }

    mutating func expect(_ symbol: String, _ context: String) throws(ExpressionSyntaxError) {
        guard isSymbol(symbol) else {
            throw ExpressionSyntaxError(
                "expected '\(symbol)' \(context), found \(describe(current))", offset: current.offset)
        }
        _ = advance()
    }

    func describe(_ token: Token) -> String {
        switch token.kind {
        case .number(let value): return "number \(value)"
        case .string(let string): return "string \"\(string)\""
        case .identifier(let name): return "'\(name)'"
        case .symbol(let symbol): return "'\(symbol)'"
        case .end: return "the end of the expression"
        }
    }

    static func parse(_ text: String) throws(ExpressionSyntaxError) -> ExpressionNode {
        var parser = Parser(tokens: try Lexer.tokenize(text))
        if case .end = parser.current.kind { throw ExpressionSyntaxError("empty expression", offset: 0) }
        let node = try parser.parseExpression()
        guard case .end = parser.current.kind else {
            throw ExpressionSyntaxError(
                "unexpected \(parser.describe(parser.current)) after the expression", offset: parser.current.offset)
        }
        return node
    }

    mutating func parseExpression() throws(ExpressionSyntaxError) -> ExpressionNode {
        try enter()
        defer { nesting -= 1 }
        let condition = try parseBinary(precedence: 0)
        if isSymbol("?") {
            _ = advance()
            let whenTrue = try parseExpression()
            try expect(":", "in a conditional 'a ? b : c'")
            let whenFalse = try parseExpression()
            return .conditional(condition, whenTrue, whenFalse)
        }
        return condition
    }

    static let precedence: [String: Int] = [
        "??": 1, "||": 2, "&&": 3, "==": 4, "!=": 4, "<": 5, "<=": 5, ">": 5, ">=": 5, "in": 5, "+": 6, "-": 6,
        "*": 7, "/": 7, "%": 7,
    ]

    func currentOperator() -> String? {
        switch current.kind {
        case .symbol(let symbol) where Self.precedence[symbol] != nil: return symbol
        case .identifier("in"): return "in"
        default: return nil
        }
    }

    mutating func parseBinary(precedence minimum: Int) throws(ExpressionSyntaxError) -> ExpressionNode {
        var left = try parseUnary()
        let outer = nesting
        defer { nesting = outer }
        while let op = currentOperator(), let precedence = Self.precedence[op], precedence > minimum {
            try enter()  // a chain grows the tree one level per operator
            let token = advance()
            let right = try parseBinary(precedence: precedence)
            left = .binary(op, left, right, offset: token.offset)
        }
        return left
    }

    mutating func parseUnary() throws(ExpressionSyntaxError) -> ExpressionNode {
        if isSymbol("!") || isSymbol("-") {
            try enter()
            defer { nesting -= 1 }
            let token = advance()
            guard case .symbol(let op) = token.kind else { preconditionFailure() }
            return .unary(op, try parseUnary(), offset: token.offset)
        }
        return try parsePostfix(try parsePrimary())
    }

    mutating func parsePostfix(_ base: ExpressionNode) throws(ExpressionSyntaxError) -> ExpressionNode {
        var node = base
        while true {
            if isSymbol("."), !current.spaced {
                let dot = advance()
                guard case .identifier(let name) = current.kind, !current.spaced else {
                    throw ExpressionSyntaxError("expected a field name after '.'", offset: dot.offset + 1)
                }
                _ = advance()
                node = .member(node, name, offset: dot.offset)
            } else if isSymbol("["), !current.spaced {
                let bracket = advance()
                let index = try parseExpression()
                try expect("]", "to close '['")
                node = .index(node, index, offset: bracket.offset)
            } else {
                return node
            }
        }
    }

    mutating func parsePrimary() throws(ExpressionSyntaxError) -> ExpressionNode {
        let token = current
        switch token.kind {
        case .number(let value):
            _ = advance()
            return .literal(value)
        case .string(let string):
            _ = advance()
            return .literal(.string(string))
        case .symbol("."):
            _ = advance()
            if case .identifier(let name) = current.kind, !current.spaced {
                _ = advance()
                return .member(.element, name, offset: token.offset)
            }
            if isSymbol("["), !current.spaced {
                let bracket = advance()
                let index = try parseExpression()
                try expect("]", "to close '['")
                return .index(.element, index, offset: bracket.offset)
            }
            return .element
        case .symbol("("):
            _ = advance()
            let inner = try parseExpression()
            try expect(")", "to close '('")
            return inner
        case .symbol("["):
            _ = advance()
            var elements: [ExpressionNode] = []
            if !isSymbol("]") {
                repeat {
                    if isSymbol(",") { _ = advance() }
                    if isSymbol("]") { break }
                    elements.append(try parseExpression())
                } while isSymbol(",")
            }
            try expect("]", "to close the list")
            return .array(elements)
        case .symbol("{"):
            _ = advance()
            var members: [(String, ExpressionNode)] = []
            if !isSymbol("}") {
                repeat {
                    if isSymbol(",") { _ = advance() }
                    if isSymbol("}") { break }
                    let keyToken = advance()
                    let key: String
                    switch keyToken.kind {
                    case .identifier(let name): key = name
                    case .string(let string): key = string
                    default:
                        throw ExpressionSyntaxError(
                            "expected a key in an object, found \(describe(keyToken))", offset: keyToken.offset)
                    }
                    try expect(":", "after the key '\(key)'")
                    members.append((key, try parseExpression()))
                } while isSymbol(",")
            }
            try expect("}", "to close the object")
            return .object(members)
        case .identifier(let name):
            _ = advance()
            switch name {
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            case "null": return .literal(.null)
            case "acc": return .accumulator
            default: break
            }
            if isSymbol("(") {
                _ = advance()
                guard Functions.table[name] != nil else {
                    throw ExpressionSyntaxError(
                        "unknown function '\(name)'\(Suggestions.didYouMean(name, in: Functions.table.keys))",
                        offset: token.offset)
                }
                var arguments: [ExpressionNode] = []
                if !isSymbol(")") {
                    repeat {
                        if isSymbol(",") { _ = advance() }
                        arguments.append(try parseExpression())
                    } while isSymbol(",")
                }
                try expect(")", "to close the arguments of \(name)()")
                return .call(name, arguments, offset: token.offset)
            }
            if Functions.table[name] != nil {
                throw ExpressionSyntaxError("'\(name)' is a function; call it as \(name)(...)", offset: token.offset)
            }
            throw ExpressionSyntaxError(
                "unknown name '\(name)'; fields of the element are written '.\(name)'", offset: token.offset)
        case .end:
            throw ExpressionSyntaxError("unexpected end of the expression", offset: token.offset)
        default:
            throw ExpressionSyntaxError("unexpected \(describe(token))", offset: token.offset)
        }
    }
}
