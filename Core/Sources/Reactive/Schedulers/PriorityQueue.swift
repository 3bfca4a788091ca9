// Inlinable so that it is specialized for each element type where it is used (a heap of
// elements waiting for the watermark is popped once per element).
/// A binary min-heap ordered by `areInIncreasingOrder` (the schedulers' queues, and elements
/// waiting for an event-time watermark).
@_spi(Components) public struct PriorityQueue<Element> {
    @usableFromInline var storage: [Element] = []
    @usableFromInline let areInIncreasingOrder: (Element, Element) -> Bool

    /// An empty heap.
    @inlinable
    public init(by areInIncreasingOrder: @escaping (Element, Element) -> Bool) {
        self.areInIncreasingOrder = areInIncreasingOrder
    }

    /// Whether it holds nothing.
    @inlinable
    public var isEmpty: Bool { storage.isEmpty }
    /// How many it holds.
    @inlinable
    public var count: Int { storage.count }
    /// The least, without taking it.
    @inlinable
    public var first: Element? { storage.first }

    /// What `body` reads of the least, without copying it out; nil when empty.
    @inlinable
    public func withFirst<Result>(_ body: (Element) -> Result) -> Result? {
        guard !storage.isEmpty else { return nil }
        return body(storage[0])
    }

    /// Everything it holds, in no particular order.
    @inlinable
    public var elements: [Element] { storage }

    /// Adds one.
    @inlinable
    public mutating func push(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if !areInIncreasingOrder(storage[child], storage[parent]) { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    /// Takes the least.
    @inlinable
    public mutating func popFirst() -> Element? {
        guard !storage.isEmpty else { return nil }
        storage.swapAt(0, storage.count - 1)
        let first = storage.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < storage.count && areInIncreasingOrder(storage[left], storage[smallest]) { smallest = left }
            if right < storage.count && areInIncreasingOrder(storage[right], storage[smallest]) { smallest = right }
            if smallest == parent { break }
            storage.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    /// Takes everything.
    @inlinable
    public mutating func removeAll() { storage.removeAll() }

    /// Takes those that `shouldBeRemoved` says, keeping the others in order.
    @inlinable
    public mutating func removeAll(where shouldBeRemoved: (Element) -> Bool) {
        let kept = storage.filter { !shouldBeRemoved($0) }
        storage.removeAll()
        for element in kept { push(element) }
    }
}
