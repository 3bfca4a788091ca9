/// Something that receives the events of a sequence.
public protocol ObserverType<Element> {
    /// The type of the elements received.
    associatedtype Element
    /// Receives one event.
    func on(_ event: Event<Element>)
}

extension ObserverType {
    /// Sends `next(element)`.
    @inlinable
    public func onNext(_ element: Element) { on(.next(element)) }

    /// Sends `completed`.
    @inlinable
    public func onCompleted() { on(.completed) }

    /// Sends `error(error)`.
    @inlinable
    public func onError(_ error: any Error) { on(.error(error)) }

    /// This observer behind the type-erased `AnyObserver`.
    @inlinable
    public func asObserver() -> AnyObserver<Element> { AnyObserver(self) }
}

/// A type-erased observer: a function receiving events.
///
/// This is the observer every operator hands to its upstream, so calling it costs one indirect call.
@frozen
public struct AnyObserver<Element>: ObserverType {
    @usableFromInline
    let handler: (Event<Element>) -> Void

    /// An observer that calls `handler` for each event.
    @inlinable
    public init(_ handler: @escaping (Event<Element>) -> Void) {
        self.handler = handler
    }

    /// Wraps another observer.
    @inlinable
    public init<Observer: ObserverType>(_ observer: Observer) where Observer.Element == Element {
        if let erased = observer as? AnyObserver<Element> {
            self = erased
        } else {
            self.handler = observer.on
        }
    }

    /// Passes the event to the wrapped handler.
    @inlinable
    public func on(_ event: Event<Element>) { handler(event) }
}
