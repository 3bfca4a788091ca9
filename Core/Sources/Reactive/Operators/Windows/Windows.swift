/// The open windows of one subscription of `buffer(_:scheduler:)` with a `WindowShape`: a pure
/// state machine over times and elements, which the sink drives with the scheduler's clock.
final class Windows<Element> {
    struct Window {
        var start: RxTime
        var end: RxTime?
        var items: [Element] = []
        /// The origins of its items (none without a durable source).
        var origins: [Origin] = []
    }

    let shape: WindowShape
    var origin: RxTime
    var open: [Window] = []
    /// With allowedLateness: the windows emitted that a late element may still join, oldest first
    /// (all of one length, so by end too), from `emittedHead`: expired ones leave from the front
    /// without a scan or a copy of the rest, and a late element finds its window by halving.
    var emittedStorage: [Window] = []
    var emittedHead = 0
    var emitted: ArraySlice<Window> { emittedStorage[emittedHead...] }

    /// Forgets the emitted windows that ended `lateness` or more before `now`.
    private func forgetEmitted(now: RxTime, lateness: RxTimeInterval) {
        while emittedHead < emittedStorage.count, (emittedStorage[emittedHead].end ?? now) + lateness <= now {
            emittedStorage[emittedHead].items = []
            emittedHead += 1
        }
        if emittedHead > 1024 && emittedHead * 2 > emittedStorage.count {
            emittedStorage.removeFirst(emittedHead)
            emittedHead = 0
        }
    }

    /// Where the emitted window starting at `start` is, or would go (the first not before it).
    private func emittedPosition(of start: RxTime) -> Int {
        var low = emittedHead
        var high = emittedStorage.count
        while low < high {
            let middle = (low + high) / 2
            if emittedStorage[middle].start < start { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Keeps `window` among the emitted ones, in order (most come after the last).
    private func insertEmitted(_ window: Window) {
        if let last = emittedStorage.last, emittedHead < emittedStorage.count, window.start < last.start {
            emittedStorage.insert(window, at: emittedPosition(of: window.start))
        } else {
            emittedStorage.append(window)
        }
    }

    init(shape: WindowShape, origin: RxTime) {
        self.shape = shape
        self.origin = origin
    }

    /// The earliest time a window closes, if one is open.
    var nextEnd: RxTime? { open.compactMap(\.end).min() }

    /// Closes the windows that end at or before `now`, oldest first.
    func close(upTo now: RxTime) -> [Window] {
        var closed: [Window] = []
        open.removeAll { window in
            guard let end = window.end, end <= now else { return false }
            closed.append(window)
            return true
        }
        return closed
    }

    /// Every open window, oldest first.
    func closeAll() -> [Window] {
        defer { open.removeAll() }
        return open
    }

    /// Keeps the windows just closed for late elements, until `now` is `lateness` past their end
    /// (without their messages: those went with the emitted lists).
    func keep(_ closed: [Window], now: RxTime, for lateness: RxTimeInterval) {
        for var window in closed {
            window.origins = []
            insertEmitted(window)
        }
        forgetEmitted(now: now, lateness: lateness)
    }

    /// Adds an element that came late, at `time` before `now`, to every window of length `every`
    /// (started every `slide`) that covers its time: an open one takes it as usual; one emitted
    /// less than `lateness` ago, or one that closed empty, takes it and is returned, to be
    /// emitted again (or for the first time).
    func addLate(
        _ element: Element, at time: RxTime, now: RxTime, allowing lateness: RxTimeInterval,
        origin elementOrigin: Origin? = nil
    ) -> [Window] {
        guard let every = shape.every else { return [] }
        forgetEmitted(now: now, lateness: lateness)
        let slide = shape.slide ?? every
        let last = Int64(((time - origin) / slide).rounded(.down))
        let first = Swift.max(0, Int64(((time - origin - every) / slide).rounded(.down)) + 1)
        var updated: [Window] = []
        for step in first...Swift.max(first, last) {
            let start = origin + slide * step
            let end = start + every
            guard start <= time, time < end else { continue }
            if end > now {
                if let position = open.firstIndex(where: { $0.start == start }) {
                    open[position].items.append(element)
                    if let elementOrigin { open[position].origins.append(elementOrigin) }
                } else {
                    open.append(
                        Window(start: start, end: end, items: [element], origins: elementOrigin.map { [$0] } ?? []))
                    open.sort { $0.start < $1.start }
                }
            } else if end + lateness > now {
                let position = emittedPosition(of: start)
                if position < emittedStorage.count, emittedStorage[position].start == start {
                    emittedStorage[position].items.append(element)
                    updated.append(emittedStorage[position])
                } else {
                    emittedStorage.insert(Window(start: start, end: end, items: [element]), at: position)
                    updated.append(Window(start: start, end: end, items: [element]))
                }
            }
        }
        // The messages of the windows emitted again go with them, as the late element's.
        return updated.map { window in
            var window = window
            window.origins = elementOrigin.map { [$0] } ?? []
            return window
        }
    }

    /// Adds an element at `now` on behalf of `elementOrigin`: what closes before it (a boundary at
    /// `now` included), then what it fills.
    func add(_ element: Element, at now: RxTime, origin elementOrigin: Origin? = nil) -> [Window] {
        var closed = close(upTo: now)
        if let gap = shape.sessionGap {
            if open.isEmpty { open.append(Window(start: now, end: now + gap)) }
            open[0].items.append(element)
            open[0].end = now + gap
            if let elementOrigin { open[0].origins.append(elementOrigin) }
        } else if let every = shape.every {
            let index = Int64(((now - origin) / every).rounded(.down))
            if let slide = shape.slide {
                // Every window of length `every`, started every `slide`, that covers `now`.
                let last = Int64(((now - origin) / slide).rounded(.down))
                var first = Int64(((now - origin - every) / slide).rounded(.down)) + 1
                first = Swift.max(0, first)
                for step in first...Swift.max(first, last) {
                    let start = origin + slide * step
                    guard start <= now, now < start + every else { continue }
                    if !open.contains(where: { $0.start == start }) {
                        open.append(Window(start: start, end: start + every))
                    }
                }
                open.sort { $0.start < $1.start }
                for position in open.indices {
                    open[position].items.append(element)
                    if let elementOrigin { open[position].origins.append(elementOrigin) }
                }
            } else {
                let start = origin + every * index
                if open.isEmpty { open.append(Window(start: start, end: start + every)) }
                open[0].items.append(element)
                if let elementOrigin { open[0].origins.append(elementOrigin) }
            }
        } else {
            if open.isEmpty { open.append(Window(start: now, end: nil)) }
            open[0].items.append(element)
            if let elementOrigin { open[0].origins.append(elementOrigin) }
        }
        if let count = shape.count, let first = open.first, first.items.count >= count {
            closed.append(first)
            open.removeFirst()
        }
        return closed
    }
}

extension Windows where Element: StateRepresentable {
    /// What a checkpoint keeps: the time since the clock's origin, each open window's age, time
    /// left and items, the items of windows whose chains were still running (`running`), and
    /// the windows emitted that late elements may still join.
    func saved(now: RxTime, running: [[Element]]) -> Element {
        Element(stateRecord: [
            ("elapsed", Element(stateDuration: now - origin)),
            (
                "open",
                Element(
                    stateList: open.map { window in
                        var fields = [("age", Element(stateDuration: now - window.start))]
                        if let end = window.end { fields.append(("left", Element(stateDuration: end - now))) }
                        fields.append(("items", Element(stateList: window.items)))
                        return Element(stateRecord: fields)
                    })
            ),
            ("running", Element(stateList: running.map { Element(stateList: $0) })),
            (
                "emitted",
                Element(
                    stateList: emitted.map { window in
                        Element(stateRecord: [
                            ("age", Element(stateDuration: now - window.start)),
                            ("length", Element(stateDuration: (window.end ?? window.start) - window.start)),
                            ("items", Element(stateList: window.items)),
                        ])
                    })
            ),
        ])
    }

    /// Goes on from what `saved` kept, as if no time had passed; returns the items of the
    /// windows whose chains must run again.
    func restore(_ saved: Element, now: RxTime) -> [[Element]] {
        origin = now - (saved.stateField("elapsed")?.stateDuration ?? .zero)
        open = (saved.stateField("open")?.stateList ?? []).map { window in
            Window(
                start: now - (window.stateField("age")?.stateDuration ?? .zero),
                end: window.stateField("left")?.stateDuration.map { now + $0 },
                items: window.stateField("items")?.stateList ?? [])
        }
        emittedStorage = (saved.stateField("emitted")?.stateList ?? []).map { window in
            let start = now - (window.stateField("age")?.stateDuration ?? .zero)
            return Window(
                start: start, end: start + (window.stateField("length")?.stateDuration ?? .zero),
                items: window.stateField("items")?.stateList ?? [])
        }.sorted { $0.start < $1.start }
        emittedHead = 0
        return (saved.stateField("running")?.stateList ?? []).compactMap(\.stateList)
    }
}
