/// One notification of a sequence: an element, or the terminal error or completion.
///
/// A sequence sends zero or more `next` events and then at most one terminal event.
@frozen
public enum Event<Element> {
    /// The next element of the sequence.
    case next(Element)
    /// The sequence failed; nothing follows.
    case error(any Error)
    /// The sequence ended successfully; nothing follows.
    case completed
}

extension Event {
    /// Whether this is `error` or `completed`.
    @inlinable
    public var isStopEvent: Bool {
        if case .next = self { return false }
        return true
    }

    /// The element of a `next` event, or nil.
    @inlinable
    public var element: Element? {
        if case .next(let element) = self { return element }
        return nil
    }

    /// The error of an `error` event, or nil.
    @inlinable
    public var error: (any Error)? {
        if case .error(let error) = self { return error }
        return nil
    }

    /// Transforms the element of a `next` event; a throwing transform yields an `error` event.
    @inlinable
    public func map<Result>(_ transform: (Element) throws -> Result) -> Event<Result> {
        switch self {
        case .next(let element):
            do { return .next(try transform(element)) } catch { return .error(error) }
        case .error(let error): return .error(error)
        case .completed: return .completed
        }
    }
}

extension Event: CustomDebugStringConvertible {
    /// A short description such as `next(1)`, `error(timeout)` or `completed`.
    public var debugDescription: String {
        switch self {
        case .next(let element): return "next(\(element))"
        case .error(let error): return "error(\(error))"
        case .completed: return "completed"
        }
    }
}

extension Event: Equatable where Element: Equatable {
    /// Events are equal when they are the same kind with equal elements; errors are compared by
    /// their type and description, as RxTest does, since
    /// errors are not Equatable.
    public static func == (lhs: Event<Element>, rhs: Event<Element>) -> Bool {
        switch (lhs, rhs) {
        case (.next(let a), .next(let b)): return a == b
        case (.completed, .completed): return true
        case (.error(let a), .error(let b)):
            return type(of: a) == type(of: b) && String(reflecting: a) == String(reflecting: b)
        default: return false
        }
    }
}

/// Errors raised by the runtime's own operators.
public enum RxError: Error, Equatable, CustomStringConvertible {
    /// `timeout` saw no element within its due time.
    case timeout
    /// An argument was outside its allowed range (for example a negative count).
    case argumentOutOfRange
    /// A subject was used after it was disposed.
    case disposed

    /// A readable description of the error.
    public var description: String {
        switch self {
        case .timeout: return "timeout: no element arrived within the due time"
        case .argumentOutOfRange: return "argument out of range"
        case .disposed: return "object was already disposed"
        }
    }
}
