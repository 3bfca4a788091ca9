#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Value {
    /// Equality as expressions see it: deep, with integers and doubles equal by value (`1 == 1.0`,
    /// also inside lists and objects). `distinctUntilChanged` uses it too, so the two agree.
    @_spi(Components) public func isEqualInExpressions(to other: Value) -> Bool {
        Operations.equal(self, other)
    }
}

/// The semantics of the expression language's operators on values.
enum Operations {
    /// A value for an error message: its type and a short rendering.
    static func describe(_ value: Value) -> String {
        var text = value.description
        if text.count > 40 { text = String(text.prefix(37)) + "..." }
        return "\(value.typeName) \(text)"
    }

    /// `.name` of a value: a field of an object; null on null (so missing parts of a path are null).
    @inline(__always)
    static func member(_ base: Value, _ name: String) throws -> Value {
        switch base {
        case .object(let object): return object[name] ?? .null
        case .null: return .null
        default:
            // A line of JSON read as text (a `.log` file, say) is the usual cause: say so.
            var hint = ""
            if case .string(let text) = base, text.first == "{" {
                hint = "; the element is text that looks like JSON: read it as JSON Lines (format: jsonl)"
            }
            throw ExpressionRuntimeError("cannot read field '\(name)' of \(describe(base))\(hint)")
        }
    }

    /// `base[index]`: an array element (negative counts from the end), an object field, a character.
    static func index(_ base: Value, _ index: Value) throws -> Value {
        switch (base, index) {
        case (.array(let array), _):
            guard let position = index.intValue else {
                throw ExpressionRuntimeError("a list index must be an integer, got \(describe(index))")
            }
            let resolved = position < 0 ? array.count + position : position
            return array.indices.contains(resolved) ? array[resolved] : .null
        case (.object(let object), .string(let key)):
            return object[key] ?? .null
        case (.string(let string), _):
            guard let position = index.intValue else {
                throw ExpressionRuntimeError("a string index must be an integer, got \(describe(index))")
            }
            let characters = Array(string)
            let resolved = position < 0 ? characters.count + position : position
            return characters.indices.contains(resolved) ? .string(String(characters[resolved])) : .null
        case (.null, _):
            return .null
        default:
            throw ExpressionRuntimeError("cannot index \(describe(base)) with \(describe(index))")
        }
    }

    static func negate(_ value: Value) throws -> Value {
        switch value {
        case .int(let int): return int == .min ? .double(-Double(int)) : .int(-int)
        case .double(let double): return .double(-double)
        default: throw ExpressionRuntimeError("cannot negate \(describe(value))")
        }
    }

    /// Deep equality; integers and doubles compare by value (`1 == 1.0`).
    static func equal(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.int(let x), .double(let y)): return Double(x) == y
        case (.double(let x), .int(let y)): return x == Double(y)
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { equal(value, $0) } ?? false }
        default: return a == b
        }
    }

    /// Orders numbers with numbers and strings with strings: negative, zero or positive.
    static func compare(_ a: Value, _ b: Value, _ op: String) throws -> Int {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.string(let x), .string(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        default:
            if let x = a.doubleValue, let y = b.doubleValue { return x < y ? -1 : (x == y ? 0 : 1) }
            throw ExpressionRuntimeError("cannot compare \(describe(a)) \(op) \(describe(b))")
        }
    }

    /// `needle in haystack`: an element of a list, a substring of a string, a key of an object.
    static func contains(_ haystack: Value, _ needle: Value) throws -> Bool {
        switch haystack {
        case .array(let array): return array.contains { equal($0, needle) }
        case .string(let string):
            guard case .string(let part) = needle else {
                throw ExpressionRuntimeError("'in' a string needs a string on the left, got \(describe(needle))")
            }
            return string.contains(part)
        case .object(let object):
            guard case .string(let key) = needle else {
                throw ExpressionRuntimeError("'in' an object needs a string key on the left, got \(describe(needle))")
            }
            return object[key] != nil
        case .null: return false
        default:
            throw ExpressionRuntimeError("'in' needs a list, string or object on the right, got \(describe(haystack))")
        }
    }

    /// `+ - * / %` on numbers; `+` also joins strings, lists and objects.
    static func arithmetic(_ op: String, _ a: Value, _ b: Value) throws -> Value {
        if case .int(let x) = a, case .int(let y) = b {
            switch op {
            case "+":
                let (sum, overflow) = x.addingReportingOverflow(y)
                return overflow ? .double(Double(x) + Double(y)) : .int(sum)
            case "-":
                let (difference, overflow) = x.subtractingReportingOverflow(y)
                return overflow ? .double(Double(x) - Double(y)) : .int(difference)
            case "*":
                let (product, overflow) = x.multipliedReportingOverflow(by: y)
                return overflow ? .double(Double(x) * Double(y)) : .int(product)
            case "/":
                if y == 0 { throw ExpressionRuntimeError("division by zero") }
                // Int.min / -1 does not fit: like + - *, an overflow gives a double.
                let (quotient, overflow) = x.dividedReportingOverflow(by: y)
                if overflow { return .double(-Double(x)) }
                return x % y == 0 ? .int(quotient) : .double(Double(x) / Double(y))
            case "%":
                if y == 0 { throw ExpressionRuntimeError("modulo by zero") }
                return .int(x.remainderReportingOverflow(dividingBy: y).partialValue)
            default: break
            }
        }
        if let x = a.doubleValue, let y = b.doubleValue {
            switch op {
            case "+": return .double(x + y)
            case "-": return .double(x - y)
            case "*": return .double(x * y)
            case "/":
                if y == 0 { throw ExpressionRuntimeError("division by zero") }
                return .double(x / y)
            case "%":
                if y == 0 { throw ExpressionRuntimeError("modulo by zero") }
                return .double(fmod(x, y))
            default: break
            }
        }
        if op == "+" {
            switch (a, b) {
            case (.string(let x), .string(let y)): return .string(try ValueLimits.joined(x, y))
            case (.string(let x), _): return .string(try ValueLimits.joined(x, Functions.text(b)))
            case (_, .string(let y)): return .string(try ValueLimits.joined(Functions.text(a), y))
            case (.array(let x), .array(let y)):
                try ValueLimits.check(items: x.count + y.count)
                return .array(x + y)
            case (.object(var x), .object(let y)):
                for (key, value) in y { x[key] = value }
                return .object(x)
            default: break
            }
        }
        throw ExpressionRuntimeError("cannot apply '\(op)' to \(describe(a)) and \(describe(b))")
    }
}

/// How large a value an expression may make: `acc + acc` in a `scan` doubles each element and
/// reached 10 GB in 40 s, out of reach of a signal. Past these, the expression fails on that
/// element (routed by `onError`).
@_spi(Host) public enum ValueLimits {
    /// The longest text, in bytes of UTF-8: 64 MiB.
    public static let textBytes = 1 << 26
    /// The most items of a list: 8 Mi.
    public static let listItems = 1 << 23

    /// `x` followed by `y`, unless that is longer than `textBytes`.
    static func joined(_ x: String, _ y: String) throws -> String {
        let length = x.utf8.count + y.utf8.count
        guard length <= textBytes else {
            throw ExpressionRuntimeError(
                "the text would be \(length) bytes, more than the \(textBytes >> 20) MiB a value may hold")
        }
        return x + y
    }

    /// Fails when a list of `items` would be longer than `listItems`.
    static func check(items: Int) throws {
        guard items <= listItems else {
            throw ExpressionRuntimeError(
                "the list would have \(items) items, more than the \(listItems) a value may hold")
        }
    }
}
