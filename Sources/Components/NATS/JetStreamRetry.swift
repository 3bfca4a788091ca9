import Reactive

/// Asks JetStream again while it answers with an error that passes (a timeout, no leader yet: a
/// cluster electing one), every half second for up to the connection's `lostAfter`. A source's
/// consumer, a group's stream and buckets and a sink's stream are all waited for this way.
struct JetStreamRetry {
    /// How long passing errors are waited out.
    let lostAfter: RxTimeInterval
    /// The run's clock.
    let now: () -> RxTime
    /// Says a line on stderr: the first error, and that JetStream answers again after one.
    let report: (String) -> Void
    /// Waits half a second before the next try; true if the work was stopped meanwhile.
    let pause: () -> Bool

    /// How long `pause` waits, in seconds.
    static let pauseSeconds = 0.5

    /// What `attempt` returned, once it did; nil if the work was stopped while waiting. Throws an
    /// error that does not pass at once, and a passing one still there after `lostAfter` (or after
    /// as many tries as fit in it: a virtual clock does not move while this waits).
    func run<Result>(_ attempt: () throws -> Result) throws -> Result? {
        let started = now()
        var triesLeft = Int(lostAfter / .seconds(Self.pauseSeconds))
        var said = false
        while true {
            do {
                let result = try attempt()
                if said { report("JetStream answers again") }
                return result
            } catch let error as NATSError where error.isPassing {
                guard now() - started < lostAfter, triesLeft > 0 else { throw error }
                if !said {
                    report("\(error); trying again for up to lostAfter (\(lostAfter.components.seconds)s)")
                }
                said = true
                triesLeft -= 1
                if pause() { return nil }
            }
        }
    }
}
