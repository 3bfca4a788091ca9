/// The observers of a subject, in subscription order, each removable by its key.
struct ObserverList<Element> {
    private var entries: [(key: Int, observer: AnyObserver<Element>)] = []
    private var nextKey = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    mutating func insert(_ observer: AnyObserver<Element>) -> Int {
        nextKey += 1
        entries.append((nextKey, observer))
        return nextKey
    }

    mutating func remove(_ key: Int) {
        if let index = entries.firstIndex(where: { $0.key == key }) { entries.remove(at: index) }
    }

    mutating func removeAll() { entries.removeAll() }

    /// Sends `event` to the observers present when the call starts.
    func dispatch(_ event: Event<Element>) {
        for entry in entries { entry.observer.on(event) }
    }
}
