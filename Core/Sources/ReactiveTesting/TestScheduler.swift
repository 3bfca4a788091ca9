@_spi(Components) import Reactive

/// A virtual-time scheduler for tests, following RxTest's conventions so cases translate one to one.
///
/// Anything scheduled for the current tick or earlier runs at the next tick; actions due at the
/// same tick run in the order they were scheduled. `start(create:)` builds the observable at 100,
/// subscribes at 200 and disposes at 1000 by default.
@_spi(Components) public final class TestScheduler: VirtualTimeScheduler {
    /// The defaults of `start`: created 100, subscribed 200, disposed 1000.
    public enum Defaults {
        /// When the observable is built.
        public static let created = 100
        /// When it is subscribed.
        public static let subscribed = 200
        /// When the subscription is disposed.
        public static let disposed = 1000
    }

    private var testables: [any TestableObservableType] = []

    /// A scheduler at `initialClock`, each tick lasting `resolution` (one second, as in RxTest).
    public override init(initialClock: Int = 0, resolution: RxTimeInterval = .seconds(1)) {
        super.init(initialClock: initialClock, resolution: resolution)
    }

    /// Moves anything due now or earlier to the next tick.
    public override func adjustScheduledTime(_ time: Int) -> Int {
        time <= clock ? clock + 1 : time
    }

    /// An observable that sends `events` at their absolute ticks to whoever is subscribed then.
    public func createHotObservable<Element>(_ events: [Recorded<Event<Element>>]) -> TestableObservable<Element> {
        let observable = TestableObservable<Element>(scheduler: self, events: events, isHot: true)
        testables.append(observable)
        return observable
    }

    /// An observable that sends `events` at their ticks counted from each subscription.
    public func createColdObservable<Element>(_ events: [Recorded<Event<Element>>]) -> TestableObservable<Element> {
        let observable = TestableObservable<Element>(scheduler: self, events: events, isHot: false)
        testables.append(observable)
        return observable
    }

    /// An observer that records what it receives, with the tick.
    public func createObserver<Element>(_ type: Element.Type) -> TestableObserver<Element> {
        TestableObserver(scheduler: self)
    }

    /// Observers subscribed to `source` at each of `times` and never disposed: for sources that
    /// several subscribers share, or that run afresh for each.
    public func subscribe<Element>(_ source: Observable<Element>, at times: Int...) -> [TestableObserver<Element>] {
        times.map { time in
            let observer = createObserver(Element.self)
            scheduleAt(time) { source.subscribe(observer) }
            return observer
        }
    }

    /// Builds the observable at `created`, subscribes at `subscribed`, disposes at `disposed`,
    /// runs the scheduler to the end, and returns what the observer received.
    public func start<Element>(
        created: Int = Defaults.created, subscribed: Int = Defaults.subscribed, disposed: Int = Defaults.disposed,
        _ create: @escaping () -> Observable<Element>
    ) -> TestableObserver<Element> {
        var source: Observable<Element>?
        var subscription: (any Disposable)?
        let observer = createObserver(Element.self)
        scheduleAt(created) { source = create() }
        scheduleAt(subscribed) { subscription = source?.subscribe(observer) }
        scheduleAt(disposed) { subscription?.dispose() }
        start()
        return observer
    }

    /// Like `start(created:subscribed:disposed:_:)` with only the disposal tick given.
    public func start<Element>(disposed: Int, _ create: @escaping () -> Observable<Element>) -> TestableObserver<
        Element
    > {
        start(created: Defaults.created, subscribed: Defaults.subscribed, disposed: disposed, create)
    }

    /// The subscriptions, of every test observable this scheduler made, that were never disposed.
    public var openSubscriptions: [Subscription] {
        testables.flatMap { $0.subscriptions.filter { $0.unsubscribe == Int.max } }
    }
}

/// The part of a test observable the scheduler checks after a test.
protocol TestableObservableType {
    var subscriptions: [Subscription] { get }
}

/// An observable of recorded events, hot or cold, that records its subscriptions.
public final class TestableObservable<Element>: ObservableType, TestableObservableType {
    /// The events it sends.
    public let recordedEvents: [Recorded<Event<Element>>]
    /// Every subscription, with its start and end ticks.
    public private(set) var subscriptions: [Subscription] = []
    private unowned let scheduler: TestScheduler
    private let isHot: Bool
    private var observers: [Int: AnyObserver<Element>] = [:]
    private var nextKey = 0

    init(scheduler: TestScheduler, events: [Recorded<Event<Element>>], isHot: Bool) {
        self.scheduler = scheduler
        self.recordedEvents = events
        self.isHot = isHot
        guard isHot else { return }
        for recorded in events {
            scheduler.scheduleAt(recorded.time) { [unowned self] in
                for key in observers.keys.sorted() { observers[key]?.on(recorded.value) }
            }
        }
    }

    /// The test observable as an `Observable`.
    public func asObservable() -> Observable<Element> {
        Observable { [self] observer, lifetime in
            let index = subscriptions.count
            subscriptions.append(Subscription(scheduler.clock))
            if isHot {
                nextKey += 1
                let key = nextKey
                observers[key] = observer
                lifetime.onDispose { [unowned self] in
                    observers[key] = nil
                    subscriptions[index] = Subscription(subscriptions[index].subscribe, scheduler.clock)
                }
            } else {
                var pending: [any Disposable] = []
                for recorded in recordedEvents {
                    pending.append(
                        scheduler.scheduleAt(scheduler.clock + recorded.time) { observer.on(recorded.value) })
                }
                lifetime.onDispose { [unowned self] in
                    for action in pending { action.dispose() }
                    subscriptions[index] = Subscription(subscriptions[index].subscribe, scheduler.clock)
                }
            }
        }
    }
}

/// An observer that records each event it receives with the tick it arrived at.
public final class TestableObserver<Element>: ObserverType {
    /// What was received, in order.
    public private(set) var events: [Recorded<Event<Element>>] = []
    private unowned let scheduler: TestScheduler

    init(scheduler: TestScheduler) {
        self.scheduler = scheduler
    }

    /// Records the event at the current tick.
    public func on(_ event: Event<Element>) {
        events.append(Recorded(time: scheduler.clock, value: event))
    }
}
