extension ObservableType {
    /// Re-subscribes to the source after each error, in the same tick, forever.
    @inlinable
    public func retry() -> Observable<Element> {
        retry(Int.max)
    }

    /// Subscribes to the source at most `maxAttempts` times in all (the first subscription
    /// counts, as in RxSwift: `retry(3)` is three subscriptions), re-subscribing in the same tick
    /// after an error, and passes on the last error.
    @inlinable
    public func retry(_ maxAttempts: Int) -> Observable<Element> {
        retry(maxAttempts, delay: { _, _ in .zero }, scheduler: nil)
    }

    /// Like `retry(_:)`, waiting before each new attempt for the delay `delay(attempt, error)` gives,
    /// counted from the failed attempt's error (`attempt` is 1 after the first failure). A nil delay,
    /// or a throwing `delay`, stops retrying and passes the error on.
    @inlinable
    public func retry(
        _ maxAttempts: Int, delay: @escaping (_ attempt: Int, _ error: any Error) throws -> RxTimeInterval?,
        scheduler: (any SchedulerType)?
    ) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            let sink = RetrySink(
                source: source, maxAttempts: max(1, maxAttempts), delay: delay, scheduler: scheduler,
                downstream: observer, lifetime: lifetime)
            sink.subscribeNextAttempt()
        }
    }

    /// Like `retry(_:)`, waiting an exponentially growing, jittered delay before each new attempt.
    @inlinable
    public func retry(
        _ maxAttempts: Int, backoff: ExponentialBackoff, scheduler: any SchedulerType
    ) -> Observable<Element> {
        retry(maxAttempts, delay: { attempt, _ in backoff.delay(afterFailure: attempt) }, scheduler: scheduler)
    }
}

/// Delays that grow exponentially between retries, with optional jitter.
public struct ExponentialBackoff: Sendable {
    /// The delay after the first failure.
    @_spi(Components) public var initial: RxTimeInterval
    /// The factor applied to the delay after each further failure.
    @_spi(Components) public var multiplier: Double
    /// The largest delay.
    @_spi(Components) public var maximum: RxTimeInterval
    /// The fraction of each delay (0 to 1) that is random: 0.5 picks between 50% and 100% of it.
    @_spi(Components) public var jitter: Double
    /// The source of randomness for jitter, a number in 0..<1; inject a seeded one for tests.
    public var random: @Sendable () -> Double

    /// A backoff starting at `initial`, multiplied by `multiplier` each time, capped at `maximum`.
    public init(
        initial: RxTimeInterval, multiplier: Double = 2, maximum: RxTimeInterval, jitter: Double = 0,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
        self.jitter = min(1, max(0, jitter))
        self.random = random
    }

    /// The delay after the `failure`-th failure (1 is the first).
    public func delay(afterFailure failure: Int) -> RxTimeInterval {
        var nanoseconds = Double(initial.totalNanoseconds)
        for _ in 1..<max(1, failure) {
            nanoseconds *= multiplier
            if nanoseconds >= Double(maximum.totalNanoseconds) { break }
        }
        nanoseconds = min(nanoseconds, Double(maximum.totalNanoseconds))
        nanoseconds *= 1 - jitter * random()
        return .nanoseconds(Int64(nanoseconds))
    }
}

@usableFromInline
final class RetrySink<Element>: Sink<Element> {
    @usableFromInline
    let source: Observable<Element>
    @usableFromInline
    let maxAttempts: Int
    @usableFromInline
    let delay: (Int, any Error) throws -> RxTimeInterval?
    @usableFromInline
    let scheduler: (any SchedulerType)?
    @usableFromInline
    var attempts = 0
    @usableFromInline
    var isSubscribing = false
    @usableFromInline
    var resubscribeRequested = false

    @inlinable
    init(
        source: Observable<Element>, maxAttempts: Int,
        delay: @escaping (Int, any Error) throws -> RxTimeInterval?, scheduler: (any SchedulerType)?,
        downstream: AnyObserver<Element>, lifetime: Lifetime
    ) {
        self.source = source
        self.maxAttempts = maxAttempts
        self.delay = delay
        self.scheduler = scheduler
        super.init(downstream: downstream, lifetime: lifetime)
    }

    /// Subscribes the next attempt; a loop (a trampoline), so a source that fails synchronously
    /// retries without growing the stack.
    @usableFromInline
    func subscribeNextAttempt() {
        if isSubscribing {
            resubscribeRequested = true
            return
        }
        repeat {
            resubscribeRequested = false
            isSubscribing = true
            attempts += 1
            let attemptLifetime = lifetime.makeChild()
            source.subscribe(AnyObserver { self.onAttempt($0, attemptLifetime) }, in: attemptLifetime)
            isSubscribing = false
        } while resubscribeRequested && !isDisposed
    }

    @usableFromInline
    func onAttempt(_ event: Event<Element>, _ attemptLifetime: Lifetime) {
        if isDisposed || attemptLifetime.isDisposed { return }
        switch event {
        case .next:
            forward(event)
        case .completed:
            forwardTerminal(event)
        case .error(let error):
            attemptLifetime.dispose()
            guard attempts < maxAttempts else {
                forwardTerminal(event)
                return
            }
            guard let scheduler else {
                subscribeNextAttempt()
                return
            }
            do {
                guard let wait = try delay(attempts, error) else {
                    forwardTerminal(event)
                    return
                }
                lifetime.add(scheduler.schedule(after: wait) { self.subscribeNextAttempt() })
            } catch {
                forwardTerminal(.error(error))
            }
        }
    }
}
