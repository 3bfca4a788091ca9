extension ObservableType {
    /// Maps each element to an inner observable and runs the inners one after another, in order.
    ///
    /// The selector runs when the element arrives (so a throwing selector fails at once, even while
    /// an earlier inner runs); the next inner starts in the tick the previous one completes.
    @inlinable
    public func concatMap<Inner: ObservableType>(
        _ selector: @escaping (Element) throws -> Inner
    ) -> Observable<Inner.Element> {
        flatMap(maxConcurrent: 1, selector)
    }
}
