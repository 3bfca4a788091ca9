#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The functions expressions can call.
enum Functions {
    struct Function: Sendable {
        let arity: ClosedRange<Int>
        let isPure: Bool
        let signature: String
        let summary: String
        let implementation: @Sendable ([Value], EvaluationScope) throws -> Value
    }

    /// The text of a value as templates show it: strings as they are, anything else as JSON.
    static func text(_ value: Value) -> String { value.text }

    static func string(_ value: Value, _ function: String) throws -> String {
        guard case .string(let string) = value else {
            throw ExpressionRuntimeError("\(function)() expects a string, got \(Operations.describe(value))")
        }
        return string
    }

    static func number(_ value: Value, _ function: String) throws -> Double {
        guard let double = value.doubleValue else {
            throw ExpressionRuntimeError("\(function)() expects a number, got \(Operations.describe(value))")
        }
        return double
    }

    static func array(_ value: Value, _ function: String) throws -> [Value] {
        guard case .array(let array) = value else {
            throw ExpressionRuntimeError("\(function)() expects a list, got \(Operations.describe(value))")
        }
        return array
    }

    /// A regular-expression function on its arguments, the pattern compiled now (the compiler
    /// compiles a literal one once instead).
    static func regex(_ name: String, _ args: [Value]) throws -> Value {
        switch RegexFunctions.compile(try string(args[1], name)) {
        case .success(let regex): return try RegexFunctions.apply(name, args[0], regex, Array(args.dropFirst(2)))
        case .failure(let invalid): throw ExpressionRuntimeError(invalid.message)
        }
    }

    static func integral(_ double: Double) -> Value {
        if let int = Int(exactly: double) { return .int(int) }
        return .double(double)
    }

    static func make(
        _ name: String, _ arity: ClosedRange<Int>, pure: Bool = true, _ signature: String, _ summary: String,
        _ implementation: @escaping @Sendable ([Value], EvaluationScope) throws -> Value
    ) -> (String, Function) {
        (
            name,
            Function(arity: arity, isPure: pure, signature: signature, summary: summary, implementation: implementation)
        )
    }

    static let table: [String: Function] = Dictionary(
        uniqueKeysWithValues: [
            make("len", 1...1, "len(x)", "Characters in a string, elements in a list, keys in an object.") { args, _ in
                try length(args[0])
            },
            make("lower", 1...1, "lower(s)", "The string in lower case.") { args, _ in
                .string(try string(args[0], "lower").lowercased())
            },
            make("upper", 1...1, "upper(s)", "The string in upper case.") { args, _ in
                .string(try string(args[0], "upper").uppercased())
            },
            make("trim", 1...1, "trim(s)", "The string without leading and trailing white space.") { args, _ in
                .string(String(try string(args[0], "trim").trimming(\.isWhitespace)))
            },
            make("contains", 2...2, "contains(x, part)", "Whether a string contains a substring, or a list an element.")
            { args, _ in
                .bool(try Operations.contains(args[0], args[1]))
            },
            make("startsWith", 2...2, "startsWith(s, prefix)", "Whether the string starts with the prefix.") {
                args, _ in
                .bool(try string(args[0], "startsWith").hasPrefix(try string(args[1], "startsWith")))
            },
            make("endsWith", 2...2, "endsWith(s, suffix)", "Whether the string ends with the suffix.") { args, _ in
                .bool(try string(args[0], "endsWith").hasSuffix(try string(args[1], "endsWith")))
            },
            make(
                "matches", 2...2, "matches(s, regex)", "Whether the string contains a match of the regular expression."
            ) { args, _ in try regex("matches", args) },
            make(
                "extract", 2...2, "extract(s, regex)",
                "The first match of the regular expression: an object of its named groups ((?<route>/[a-z]+)), "
                    + "else a list of its groups, else the text matched; null when nothing matches."
            ) { args, _ in try regex("extract", args) },
            make(
                "replaceRegex", 3...3, "replaceRegex(s, regex, replacement)",
                "The string with every match replaced; in the replacement $0 is the match, $1… its groups, "
                    + "${name} a named group, $$ a dollar sign."
            ) { args, _ in try regex("replaceRegex", args) },
            make(
                "splitRegex", 2...2, "splitRegex(s, regex)",
                "The parts of the string between matches of the regular expression."
            ) { args, _ in try regex("splitRegex", args) },
            make("default", 2...2, "default(x, fallback)", "x, or the fallback when x is null.") { args, _ in
                if case .null = args[0] { return args[1] }
                return args[0]
            },
            make(
                "random", 2...2, pure: false, "random(lo, hi)",
                "A random integer from lo to hi inclusive, from the pipeline's seed."
            ) { args, scope in
                guard let lo = args[0].intValue, let hi = args[1].intValue, lo <= hi else {
                    throw ExpressionRuntimeError("random() expects integers lo <= hi, got \(args[0]) and \(args[1])")
                }
                return .int(Int.random(in: lo...hi, using: &scope.environment.random))
            },
            make(
                "now", 0...0, pure: false, "now()",
                "The time now in milliseconds since the Unix epoch (on the virtual clock of a test, from its startAt)."
            ) { _, scope in
                .int(Int((scope.environment.epoch + scope.environment.clock()).totalNanoseconds / 1_000_000))
            },
            make("elapsed", 0...0, pure: false, "elapsed()", "Milliseconds on the pipeline's clock since it started.") {
                _, scope in
                .int(Int(scope.environment.clock().totalNanoseconds / 1_000_000))
            },
            make(
                "parseTime", 1...2, "parseTime(x, format?)",
                "Milliseconds since the epoch of a time: RFC 3339 text, epoch seconds or milliseconds, or text in a "
                    + "strftime format ('%d/%b/%Y:%H:%M:%S %z'; 'unix', 'unix_ms')."
            ) { args, _ in
                try TimeFunctions.parse(args[0], format: args.count > 1 ? args[1] : nil)
            },
            make(
                "formatTime", 1...3, "formatTime(ms, format?, zone?)",
                "A time (milliseconds since the epoch) as text: RFC 3339 by default, or a strftime format; in UTC "
                    + "or a zone of the tz database ('Europe/Paris')."
            ) { args, _ in
                try TimeFunctions.format(
                    args[0], pattern: try TimeFunctions.writingPattern(args.count > 1 ? args[1] : nil),
                    zone: try TimeFunctions.zone(args.count > 2 ? args[2] : nil))
            },
            make("split", 2...2, "split(s, separator)", "The parts of the string between separators.") { args, _ in
                let s = try string(args[0], "split")
                let separator = try string(args[1], "split")
                if separator.isEmpty { return .array(s.map { .string(String($0)) }) }
                return .array(
                    s.split(separator: separator, omittingEmptySubsequences: false).map { .string(String($0)) })
            },
            make("join", 2...2, "join(list, separator)", "The elements as text, joined by the separator.") { args, _ in
                .string(try array(args[0], "join").map(text).joined(separator: try string(args[1], "join")))
            },
            make("replace", 3...3, "replace(s, old, new)", "The string with every occurrence of old replaced.") {
                args, _ in
                .string(
                    try string(args[0], "replace").replacing(
                        try string(args[1], "replace"), with: try string(args[2], "replace")))
            },
            make("round", 1...2, "round(x, digits?)", "The number rounded (to so many decimal digits).") { args, _ in
                let x = try number(args[0], "round")
                let digits = args.count > 1 ? (args[1].intValue ?? 0) : 0
                if digits == 0 { return integral(x.rounded()) }
                let scale = pow(10, Double(digits))
                return .double((x * scale).rounded() / scale)
            },
            make("floor", 1...1, "floor(x)", "The largest integer not above x.") { args, _ in
                integral(try number(args[0], "floor").rounded(.down))
            },
            make("ceil", 1...1, "ceil(x)", "The smallest integer not below x.") { args, _ in
                integral(try number(args[0], "ceil").rounded(.up))
            },
            make("abs", 1...1, "abs(x)", "The absolute value.") { args, _ in
                if case .int(let int) = args[0], int != .min { return .int(abs(int)) }
                return .double(abs(try number(args[0], "abs")))
            },
            make("int", 1...1, "int(x)", "The value as an integer: numbers truncate, strings are parsed.") { args, _ in
                switch args[0] {
                case .int: return args[0]
                case .double(let double) where double.isFinite && abs(double) < 9.2e18: return .int(Int(double))
                case .string(let s):
                    let trimmed = String(s.trimming(\.isWhitespace))
                    if let int = Int(trimmed) { return .int(int) }
                    if let double = Double(trimmed), double.isFinite, abs(double) < 9.2e18 { return .int(Int(double)) }
                    throw ExpressionRuntimeError("int() cannot read '\(s)' as a number")
                case .bool(let bool): return .int(bool ? 1 : 0)
                default: throw ExpressionRuntimeError("int() cannot convert \(Operations.describe(args[0]))")
                }
            },
            make("float", 1...1, "float(x)", "The value as a number with a fraction.") { args, _ in
                switch args[0] {
                case .int(let int): return .double(Double(int))
                case .double: return args[0]
                case .string(let s):
                    guard let double = Double(String(s.trimming(\.isWhitespace))) else {
                        throw ExpressionRuntimeError("float() cannot read '\(s)' as a number")
                    }
                    return .double(double)
                default: throw ExpressionRuntimeError("float() cannot convert \(Operations.describe(args[0]))")
                }
            },
            make("string", 1...1, "string(x)", "The value as text (JSON for lists and objects).") { args, _ in
                .string(text(args[0]))
            },
            make("bool", 1...1, "bool(x)", "Whether the value counts as true.") { args, _ in .bool(args[0].isTruthy) },
            make("type", 1...1, "type(x)", "null, bool, number, string, array or object.") { args, _ in
                .string(args[0].typeName)
            },
            make("keys", 1...1, "keys(o)", "The keys of an object, in order.") { args, _ in
                guard case .object(let object) = args[0] else {
                    throw ExpressionRuntimeError("keys() expects an object, got \(Operations.describe(args[0]))")
                }
                return .array(object.keys.map { .string($0) })
            },
            make("values", 1...1, "values(o)", "The values of an object, in order.") { args, _ in
                guard case .object(let object) = args[0] else {
                    throw ExpressionRuntimeError("values() expects an object, got \(Operations.describe(args[0]))")
                }
                return .array(object.values)
            },
            make("min", 1...8, "min(a, b, ...) or min(list)", "The smallest number.") { args, _ in
                try extreme(args, "min", <)
            },
            make("max", 1...8, "max(a, b, ...) or max(list)", "The largest number.") { args, _ in
                try extreme(args, "max", >)
            },
            make("sum", 1...1, "sum(list)", "The sum of the numbers in a list.") { args, _ in
                try array(args[0], "sum").reduce(Value.int(0)) { try Operations.arithmetic("+", $0, $1) }
            },
            make("first", 1...1, "first(list)", "The first element, or null.") { args, _ in
                try array(args[0], "first").first ?? .null
            },
            make("last", 1...1, "last(list)", "The last element, or null.") { args, _ in
                try array(args[0], "last").last ?? .null
            },
            make("reverse", 1...1, "reverse(x)", "The list or string reversed.") { args, _ in
                if case .string(let s) = args[0] { return .string(String(s.reversed())) }
                return .array(try array(args[0], "reverse").reversed())
            },
            make(
                "slice", 2...3, "slice(x, start, end?)",
                "Part of a list or string; negative positions count from the end."
            ) { args, _ in
                let start = args[1].intValue ?? 0
                switch args[0] {
                case .array(let list): return .array(slice(list, start, args.count > 2 ? args[2].intValue : nil))
                case .string(let s):
                    return .string(String(slice(Array(s), start, args.count > 2 ? args[2].intValue : nil)))
                default:
                    throw ExpressionRuntimeError(
                        "slice() expects a list or string, got \(Operations.describe(args[0]))")
                }
            },
            make("clamp", 3...3, "clamp(x, lo, hi)", "x limited to lo...hi.") { args, _ in
                if try Operations.compare(args[0], args[1], "<") < 0 { return args[1] }
                if try Operations.compare(args[0], args[2], ">") > 0 { return args[2] }
                return args[0]
            },
            make("has", 2...2, "has(o, key)", "Whether the object has the key.") { args, _ in
                .bool(args[0][try string(args[1], "has")] != nil)
            },
            make("toJSON", 1...1, "toJSON(x)", "The value as compact JSON text.") { args, _ in
                .string(args[0].description)
            },
            make("parseJSON", 1...1, "parseJSON(s)", "The value the JSON text describes.") { args, _ in
                do { return try JSONParser.parse(try string(args[0], "parseJSON")) } catch {
                    throw ExpressionRuntimeError("parseJSON(): \(error)")
                }
            },
        ] + ListFunctions.higherOrder + ListFunctions.plain)

    static func extreme(_ args: [Value], _ name: String, _ better: (Double, Double) -> Bool) throws -> Value {
        let candidates = args.count == 1 ? try array(args[0], name) : args
        var best: Value?
        for candidate in candidates {
            let value = try number(candidate, name)
            if let current = best, let currentValue = current.doubleValue, !better(value, currentValue) { continue }
            best = candidate
        }
        return best ?? .null
    }

    static func slice<T>(_ items: [T], _ start: Int, _ end: Int?) -> [T] {
        let count = items.count
        let from = max(0, min(count, start < 0 ? count + start : start))
        let toRaw = end ?? count
        let to = max(from, min(count, toRaw < 0 ? count + toRaw : toRaw))
        return Array(items[from..<to])
    }

    /// Name, signature and summary of every function, for `rivulet components` and the docs.
    static var catalogue: [(name: String, signature: String, summary: String)] {
        table.map { ($0.key, $0.value.signature, $0.value.summary) }.sorted { $0.name < $1.name }
    }
}

/// The expression language as documentation sees it.
@_spi(Host) public enum ExpressionLanguage {
    /// Every function: name, signature and one-line summary, sorted by name.
    public static var functions: [(name: String, signature: String, summary: String)] { Functions.catalogue }
}

extension Functions {
    /// `len(x)`; called directly by compiled expressions (the commonest call in filters).
    static func length(_ value: Value) throws -> Value {
        switch value {
        case .string(let string): return .int(string.count)
        case .array(let array): return .int(array.count)
        case .object(let object): return .int(object.count)
        case .null: return .int(0)
        default:
            throw ExpressionRuntimeError("len() expects a string, list or object, got \(Operations.describe(value))")
        }
    }
}
