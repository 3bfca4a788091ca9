/// `eventTime`'s `maxAhead`, for one input: an element stamped far ahead of the others (a clock
/// set to the year 9999) would move the watermark there and make everything after it late. An
/// element more than `maxAhead` past the latest time the input has taken waits as a candidate,
/// and the next element decides: one no more than `maxAhead` behind the candidate (or past it)
/// says time did jump, and the candidate goes on first; one further behind says it did not, and
/// the candidate is refused. The end of the input lets a candidate go on. A pure state machine:
/// the operator acts on what it decides.
final class AheadGuard<Element> {
    /// An element waiting for the next to decide, with its message.
    struct Held {
        let element: Element
        let time: Int64
        let origin: Origin?
    }

    /// What became of the candidate held until now.
    enum Outcome {
        /// The next element followed it: it goes on (before that element).
        case confirmed(Held)
        /// The next element was far behind it: it is refused.
        case refused(Held)
    }

    let maxAhead: Int64
    /// The element waiting, if one does.
    private(set) var candidate: Held?
    /// The latest time taken (nil before the first).
    private var latest: Int64?

    init(maxAhead: Int64, latest: Int64? = nil) {
        self.maxAhead = maxAhead
        self.latest = latest
    }

    /// Decides on `element` at `time`: what became of the candidate before it, if there was one,
    /// and whether this one is taken now (true) or waits as the candidate (false).
    func consider(_ element: Element, at time: Int64, origin: Origin?) -> (before: Outcome?, takeNow: Bool) {
        var before: Outcome?
        if let held = candidate {
            candidate = nil
            if time >= held.time.subtractingReportingOverflow(maxAhead).partialValue {
                before = .confirmed(held)
                latest = max(latest ?? held.time, held.time)
            } else {
                before = .refused(held)
            }
        }
        if let latest {
            let (bound, overflow) = latest.addingReportingOverflow(maxAhead)
            if !overflow && time > bound {
                candidate = Held(element: element, time: time, origin: origin)
                return (before, false)
            }
        }
        latest = max(latest ?? time, time)
        return (before, true)
    }

    /// At the input's end: the candidate, which then goes on (nothing came to refuse it).
    func end() -> Held? {
        defer { candidate = nil }
        if let candidate { latest = max(latest ?? candidate.time, candidate.time) }
        return candidate
    }
}
