import Reactive

/// A value recorded at a virtual tick: an event of a test observable or observer.
public struct Recorded<Value>: CustomDebugStringConvertible {
    /// The tick.
    public let time: Int
    /// The value recorded.
    public let value: Value

    /// A value recorded at `time`.
    public init(time: Int, value: Value) {
        self.time = time
        self.value = value
    }

    /// `value @ time`.
    public var debugDescription: String { "\(value) @ \(time)" }
}

extension Recorded: Equatable where Value: Equatable {}

extension Recorded {
    /// `next(element)` at `time`.
    public static func next<Element>(_ time: Int, _ element: Element) -> Recorded<Event<Element>>
    where Value == Event<Element> {
        Recorded(time: time, value: .next(element))
    }

    /// `completed` at `time`.
    public static func completed<Element>(_ time: Int, _ type: Element.Type = Element.self) -> Recorded<Event<Element>>
    where Value == Event<Element> {
        Recorded(time: time, value: .completed)
    }

    /// `error(error)` at `time`.
    public static func error<Element>(
        _ time: Int, _ error: any Error, _ type: Element.Type = Element.self
    ) -> Recorded<Event<Element>> where Value == Event<Element> {
        Recorded(time: time, value: .error(error))
    }
}

/// A subscription to a test observable: when it started and when it ended (`Int.max`: never).
public struct Subscription: Equatable, Hashable, CustomDebugStringConvertible {
    /// The tick of subscription.
    public let subscribe: Int
    /// The tick of disposal, or `Int.max` while still subscribed.
    public let unsubscribe: Int

    /// A subscription still open.
    public init(_ subscribe: Int) {
        self.init(subscribe, Int.max)
    }

    /// A subscription from `subscribe` to `unsubscribe`.
    public init(_ subscribe: Int, _ unsubscribe: Int) {
        self.subscribe = subscribe
        self.unsubscribe = unsubscribe
    }

    /// `(200, 1000)`, or `(200, ∞)` while open.
    public var debugDescription: String {
        unsubscribe == Int.max ? "(\(subscribe), ∞)" : "(\(subscribe), \(unsubscribe))"
    }
}

/// An error for tests; equal when the codes are equal.
public struct TestError: Error, Equatable, CustomStringConvertible {
    /// A number telling test errors apart.
    public let code: Int

    /// A test error with `code`.
    public init(_ code: Int = 0) {
        self.code = code
    }

    /// `testError(code)`.
    public var description: String { "testError(\(code))" }
}
