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
                        // `{...x, k: v}` (JavaScript's spread) is written `x + {k: v}` here.
                        let spread =
                            keyToken.kind == .symbol(".") ? "; to merge objects write x + {k: v} (its keys win)" : ""
                        throw ExpressionSyntaxError(
                            "expected a key in an object, found \(describe(keyToken))\(spread)", offset: keyToken.offset
                        )
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
