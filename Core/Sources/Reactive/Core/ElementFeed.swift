/// A sink as an inlined entry point sees it: three calls. The entry point takes the events apart
/// where the element's type is known, so the sink's code, not inlined, never builds or takes apart
/// an `Event` of an element type it does not know (each costs a type lookup per element).
@_spi(Components) public protocol ElementFeed: AnyObject {
    /// What it takes.
    associatedtype Element
    /// The source's next element.
    func take(_ element: Element)
    /// The source's next element, with the event it came in: a feed that passes the element on
    /// as it came can pass on that event, without copying the element into a new one.
    func take(_ element: Element, in event: Event<Element>)
    /// The source failed.
    func fail(_ error: any Error)
    /// The source completed.
    func complete()
}

extension ElementFeed {
    /// The element alone, by default.
    @inlinable public func take(_ element: Element, in event: Event<Element>) { take(element) }
}

extension ObservableType {
    /// Subscribes `feed` to this stream in `lifetime`: each event becomes the feed's call.
    @_spi(Components) @inlinable public func subscribe<Feed: ElementFeed>(feeding feed: Feed, in lifetime: Lifetime)
    where Feed.Element == Element {
        asObservable().subscribe(
            AnyObserver { event in
                switch event {
                case .next(let element): feed.take(element, in: event)
                case .error(let error): feed.fail(error)
                case .completed: feed.complete()
                }
            }, in: lifetime)
    }
}
