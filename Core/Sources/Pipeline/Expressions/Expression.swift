import Reactive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an expression sees while it runs: the element `.`, the accumulator `acc` (in `scan`) and
/// the pipeline's environment. One scope is reused for every element an operator evaluates, so
/// evaluating allocates nothing for the scope itself.
public final class EvaluationScope {
    // A scope belongs to one operator on its pipeline's thread, so the per-element dynamic
    // exclusivity checks on these properties buy nothing and cost about 5% of W2.
    /// The current element, `.`.
    public var element: Value {
        get { storedElement }
        set {
            objectElement = Self.unretainedStorage(newValue)
            storedElement = newValue
        }
    }
    @exclusivity(unchecked)
    private var storedElement: Value
    /// The element's storage when it is an object, not retained: the element holds it for as long
    /// as it is set, and reading a member through it changes no reference count (two atomic
    /// operations a read fewer than going through `element`).
    @exclusivity(unchecked)
    private var objectElement: Unmanaged<ObjectBox>?

    /// The element's bytes when it is an object read on demand, not retained (as above).
    @inline(__always)
    var rawElement: Unmanaged<RawObject>? {
        guard let objectElement, objectElement._withUnsafeGuaranteedRef({ $0.isRaw }) else { return nil }
        return Unmanaged<RawObject>.fromOpaque(objectElement.toOpaque())
    }
    /// The accumulator, `acc` (null outside `scan`).
    @exclusivity(unchecked)
    @_spi(Components) public var accumulator: Value
    /// The pipeline's clock and random numbers.
    @_spi(Components) public let environment: ExpressionEnvironment
    // The argument lists of one- and two-argument calls, reused from element to element: a
    // function call then allocates nothing (a function keeping its list gets its own copy).
    @exclusivity(unchecked)
    var oneArgument: [Value] = [.null]
    @exclusivity(unchecked)
    var twoArguments: [Value] = [.null, .null]
    // The computed members of an object being built from a raw one, written as JSON; reused.
    @exclusivity(unchecked)
    var memberText: [UInt8] = []

    @inline(__always)
    private static func unretainedStorage(_ value: Value) -> Unmanaged<ObjectBox>? {
        value.unretainedObjectStorage
    }

    /// The current element, moved out (the scope's becomes null).
    public func takeElement() -> Value {
        objectElement = nil
        var taken = Value.null
        swap(&taken, &storedElement)
        return taken
    }

    /// `.name` of the current element, read in place (no copy of the element first).
    @inline(__always)
    func member(_ name: String) throws -> Value {
        if let objectElement {
            return objectElement._withUnsafeGuaranteedRef { JSONObject.member(name, of: $0) } ?? .null
        }
        switch storedElement {
        case .object(let object): return object[name] ?? .null
        case .null: return .null
        default: return try Operations.member(storedElement, name)
        }
    }

    /// A scope over `environment`.
    @_spi(Components) public init(
        element: Value = .null, accumulator: Value = .null, environment: ExpressionEnvironment
    ) {
        self.objectElement = Self.unretainedStorage(element)
        self.storedElement = element
        self.accumulator = accumulator
        self.environment = environment
    }
}

/// The parts of a pipeline that expressions may read: its scheduler's clock (`now()`) and its
/// seeded random numbers (`random(lo, hi)`), so tests give the same answers every time.
@_spi(Components) public final class ExpressionEnvironment {
    /// The time on the pipeline's scheduler.
    public let clock: () -> RxTime
    /// The time since the Unix epoch at which `clock` read zero (the wall clock when a run
    /// started, or a test's `startAt`), so that `now()` is a date.
    public let epoch: RxTime
    /// The pipeline's random numbers.
    @_spi(Components) public var random: SeededRandom

    /// An environment reading `clock`, which started `epoch` after the Unix epoch, with random
    /// numbers from `seed`.
    @_spi(Components) public init(seed: UInt64, epoch: RxTime, clock: @escaping () -> RxTime) {
        self.clock = clock
        self.epoch = epoch
        self.random = SeededRandom(seed: seed)
    }

    /// An environment reading `clock`, which started at the Unix epoch, with random numbers from
    /// `seed` (the form plugins built before `epoch` call).
    @_spi(Components) public convenience init(seed: UInt64, clock: @escaping () -> RxTime = { .zero }) {
        self.init(seed: seed, epoch: .zero, clock: clock)
    }
}

extension ExpressionEnvironment {
    /// The time since the Unix epoch of an RFC 3339 text (`2026-11-25T10:00:00Z`), for an
    /// environment's `epoch`; nil if it is not one.
    @_spi(Components) public static func epoch(rfc3339 text: String) -> RxTime? {
        TimeText.parseRFC3339(Substring(text)).map { .milliseconds($0) }
    }

    /// A time in milliseconds since the Unix epoch as RFC 3339 text in UTC, as `formatTime` writes it.
    @_spi(Components) public static func rfc3339(epochMilliseconds milliseconds: Int) -> String {
        TimeText.rfc3339(milliseconds)
    }
}

/// A small, fast, seedable random number generator (SplitMix64).
@_spi(Components) public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that always produces the same numbers for the same seed.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A compiled expression: parsed once, evaluated as a chain of closures.
public struct Expression {
    /// The text it was compiled from.
    public let source: String
    @usableFromInline
    let evaluator: (EvaluationScope) throws -> Value
    /// Whether it needs `acc` (only `scan` provides one).
    @_spi(Components) public let usesAccumulator: Bool
    /// The member of the element it reads, when it is just that (`.name`): an object of such
    /// expressions copies the members' text from an object read on demand.
    let field: String?
    /// Whether it calls nothing that depends on time or order (`now()`, `random()`), so it may be
    /// evaluated on several threads at once (`parallel:`).
    @_spi(Components) public let isPure: Bool

    /// Compiles `source`; a syntax error gives the offset inside it.
    public init(_ source: String) throws(ExpressionSyntaxError) {
        let node = try Parser.parse(source)
        self.source = source
        self.evaluator = try ExpressionCompiler.compile(node)
        self.usesAccumulator = ExpressionCompiler.mentionsAccumulator(node)
        self.isPure = ExpressionCompiler.isPure(node)
        if case .member(.element, let name, _) = node { field = name } else { field = nil }
    }

    /// An expression that always gives `value`.
    @_spi(Components) public init(constant value: Value) {
        source = value.description
        evaluator = { _ in value }
        usesAccumulator = false
        field = nil
        isPure = true
    }

    init(
        source: String, evaluator: @escaping (EvaluationScope) throws -> Value, usesAccumulator: Bool, isPure: Bool
    ) {
        self.source = source
        self.evaluator = evaluator
        self.usesAccumulator = usesAccumulator
        self.isPure = isPure
        field = nil
    }

    /// Evaluates on the scope's current element.
    @inlinable
    public func evaluate(in scope: EvaluationScope) throws -> Value {
        try evaluator(scope)
    }

    /// The value of a plain `.name` on an object, read in place, as evaluating it would give it;
    /// nil when the expression is anything else or the element is no object (then evaluate it).
    /// Without a scope, it changes no reference count but the result's.
    @_spi(Host) public func fieldValue(of element: Value) -> Value? {
        guard let field, let storage = element.unretainedObjectStorage else { return nil }
        return storage._withUnsafeGuaranteedRef { JSONObject.member(field, of: $0) } ?? .null
    }

    /// For a plain `.name` on an object read on demand whose member is text written without
    /// escapes: `body` of the text's UTF-8 bytes, read in place (no string is made); else nil
    /// (evaluate the expression instead). The bytes are those of the string evaluating gives.
    @_spi(Components) public func withFieldText<R>(of element: Value, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard let field, let raw = element.unretainedRawObject else { return nil }
        return raw._withUnsafeGuaranteedRef { raw in
            guard let text = Self.plainText(ofMember: field, in: raw) else { return nil }
            return body(text)
        }
    }

    /// `withFieldText(of:_:)` for a body that gives an integer (a key's partition): not
    /// generic, so the result comes back without the generic value witnesses a caller in another
    /// module would otherwise go through for every element.
    @_spi(Components) public func withFieldText(of element: Value, _ body: (UnsafeBufferPointer<UInt8>) -> Int) -> Int?
    {
        guard let field, let raw = element.unretainedRawObject else { return nil }
        return raw._withUnsafeGuaranteedRef { raw in
            guard let text = Self.plainText(ofMember: field, in: raw) else { return nil }
            return body(text)
        }
    }

    /// The text of member `field` of `raw` without its quotes, when it is text written without
    /// escapes; else nil.
    @inline(__always)
    static func plainText(ofMember field: String, in raw: RawObject) -> UnsafeBufferPointer<UInt8>? {
        guard let position = raw.position(of: field) else { return nil }
        let text = raw.valueText(at: position)
        guard text.count >= 2, text[0] == UInt8(ascii: "\""),
            !containsBackslash(UnsafeBufferPointer(rebasing: text[1..<(text.count - 1)]))
        else { return nil }
        return UnsafeBufferPointer(rebasing: text[1..<(text.count - 1)])
    }

    /// Whether `text` has a backslash: a loop for the short text of most keys, where a call to
    /// `memchr` costs more than the search.
    @inline(__always)
    static func containsBackslash(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard text.count <= 16 else { return memchr(text.baseAddress!, Int32(UInt8(ascii: "\\")), text.count) != nil }
        for byte in text where byte == UInt8(ascii: "\\") { return true }
        return false
    }

    /// The member a plain `.name` reads, or nil for any other expression: read it from an object
    /// with `object[name]` (nil there means null), which is what evaluating gives.
    @_spi(Components) public var fieldName: String? { field }

    /// For a plain `.name` on an object read on demand whose member is an integer written plainly
    /// (digits, perhaps a minus, at most 18 of them): the integer, read in place; else nil
    /// (evaluate the expression instead, which gives `.int` of the same).
    @_spi(Components) public func fieldInteger(of element: Value) -> Int? {
        guard let field else { return nil }
        return Self.fieldInteger(named: field, of: element)
    }

    /// `fieldInteger(of:)` of the expression whose `fieldName` is `field`: for a caller that keeps
    /// the name, not the expression (reading an expression from an array copies it, a retain and a
    /// release of each of its parts).
    @_spi(Components) public static func fieldInteger(named field: String, of element: Value) -> Int? {
        guard let raw = element.unretainedRawObject else { return nil }
        return raw._withUnsafeGuaranteedRef { $0.integer(ofMember: field) }
    }

    /// Evaluates on `element`.
    public func evaluate(_ element: Value, in scope: EvaluationScope) throws -> Value {
        scope.element = element
        return try evaluator(scope)
    }

    /// An expression building an object (or list) from others: what `map: {title: .x}` compiles to.
    @_spi(Components) public static func object(_ members: [(String, Expression)]) -> Expression {
        let keys = members.map(\.0)
        let evaluators = members.map(\.1.evaluator)
        let source = "{" + members.map { "\($0.0): \($0.1.source)" }.joined(separator: ", ") + "}"
        return Expression(
            source: source,
            evaluator: ExpressionCompiler.objectEvaluator(
                keys: keys, evaluators: evaluators, fields: members.map(\.1.field)),
            usesAccumulator: members.contains { $0.1.usesAccumulator }, isPure: members.allSatisfy(\.1.isPure))
    }

    /// An expression building a list from others.
    @_spi(Components) public static func array(_ elements: [Expression]) -> Expression {
        let evaluators = elements.map(\.evaluator)
        return Expression(
            source: "[" + elements.map(\.source).joined(separator: ", ") + "]",
            evaluator: { scope in .array(try evaluators.map { try $0(scope) }) },
            usesAccumulator: elements.contains { $0.usesAccumulator }, isPure: elements.allSatisfy(\.isPure))
    }
}
