/// A sink as an inlined entry point sees it: three calls. The entry point takes the events apart
/// where the element's type is known, so the sink's code, not inlined, never builds or takes apart
/// an `Event` of an element type it does not know (each costs a type lookup per element).
@_spi(Components) public protocol ElementFeed: AnyObject {
    /// What it takes.
    associatedtype Element
    /// The source's next element.
    func take(_ element: Element)
    /// The source failed.
    func fail(_ error: any Error)
    /// The source completed.
    func complete()
}

extension ObservableType {
    /// Subscribes `feed` to this stream in `lifetime`: each event becomes the feed's call.
    @_spi(Components) @inlinable public func subscribe<Feed: ElementFeed>(feeding feed: Feed, in lifetime: Lifetime)
    where Feed.Element == Element {
        asObservable().subscribe(
            AnyObserver { event in
                switch event {
                case .next(let element): feed.take(element)
                case .error(let error): feed.fail(error)
                case .completed: feed.complete()
                }
            }, in: lifetime)
    }
}
