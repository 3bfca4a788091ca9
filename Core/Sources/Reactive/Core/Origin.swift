/// What caused the events being delivered right now: a message that must be acknowledged once
/// all the work it caused is done.
///
/// A source whose input must be acknowledged (a durable stream) sets `Origin.current` while it
/// emits an element. Whatever keeps a reference to the origin keeps the message open: an operator
/// that holds the element for later (`debounce`, `buffer`, an inner subscription of `flatMap`)
/// keeps its origin with it and restores it when it emits; a sink keeps it until the element is
/// written. When the last reference goes, the origin's `deinit` settles the message, so an element
/// dropped on purpose (`filter`, a superseded `debounce`) is settled as soon as nothing holds it.
///
/// Pipelines without such a source never set it: every check is a load of a nil reference. The
/// runtime is single-threaded (every event happens on the pipeline's scheduler), so the current
/// origin is one variable read and written on that thread only.
open class Origin {
    // Read by every sink for every element, on the pipeline's thread only: unchecked, since a
    // dynamic exclusivity check of a global costs a thread-local lookup each time.
    /// The origin of the events being delivered; nil outside a durable source's emission.
    @exclusivity(unchecked) nonisolated(unsafe) public static var current: Origin?

    /// An origin.
    public init() {}

    /// Records that work caused by this origin failed: the message goes back instead of being
    /// acknowledged. The default does nothing.
    open func fail(_ error: any Error) {}

    /// Records that every effect of this origin is durable in a committed checkpoint (an
    /// operator's state holds it), so the message may be acknowledged now rather than when
    /// nothing holds it any more. The default does nothing.
    open func checkpointed() {}

    /// Records that the checkpoint being taken holds every effect of this origin (an operator's
    /// state holds it, or a sink wrote it since the last one): called before the checkpoint's
    /// source positions are read and committed with it, so a source can count the message as
    /// done in that checkpoint. `checkpointed()` follows once it is committed. The default does
    /// nothing.
    open func checkpointing() {}

    /// Runs `body` with `origin` as the current origin, then restores the previous one.
    @inlinable
    public static func with<Result>(_ origin: Origin?, _ body: () throws -> Result) rethrows -> Result {
        let saved = current
        current = origin
        defer { current = saved }
        return try body()
    }

    /// One origin standing for several (a buffer emitted as one element): it keeps them all, and
    /// a failure fails each of them. Nil for none, the origin itself for one.
    public static func joining(_ origins: [Origin]) -> Origin? {
        switch origins.count {
        case 0: return nil
        case 1: return origins[0]
        default: return JoinedOrigin(origins)
        }
    }

    /// The origin for an event caused by both `first` and `second`.
    public static func joining(_ first: Origin?, _ second: Origin?) -> Origin? {
        guard let first else { return second }
        guard let second, second !== first else { return first }
        return JoinedOrigin([first, second])
    }
}

/// Several origins held as one.
final class JoinedOrigin: Origin {
    let parts: [Origin]

    init(_ parts: [Origin]) {
        self.parts = parts
    }

    override func fail(_ error: any Error) {
        for part in parts { part.fail(error) }
    }

    override func checkpointed() {
        for part in parts { part.checkpointed() }
    }

    override func checkpointing() {
        for part in parts { part.checkpointing() }
    }
}

/// The origins of the elements an operator holds (a buffer's, a queue's), collected only while
/// some are set: empty and free otherwise.
@usableFromInline
struct HeldOrigins {
    @usableFromInline
    var origins: [Origin] = []

    @inlinable
    init() {}

    /// Keeps the current origin, if any.
    @inlinable
    mutating func keepCurrent() {
        if let origin = Origin.current { origins.append(origin) }
    }

    /// Everything kept, still kept.
    @usableFromInline
    var all: [Origin] { origins }

    /// Hands over everything kept, as one origin.
    @inlinable
    mutating func take() -> Origin? {
        if origins.isEmpty { return nil }
        defer { origins = [] }
        return Origin.joining(origins)
    }
}

extension ObservableType {
    /// The same events, each delivered with `origin` as (part of) the current origin, and
    /// `origin` kept until the subscription ends: what an inner subscription of `flatMap` needs so
    /// that the outer element stays open until its inner is done.
    @inlinable
    func carrying(_ origin: Origin) -> Observable<Element> {
        let source = asObservable()
        return Observable { observer, lifetime in
            lifetime.onDispose { withExtendedLifetime(origin) {} }
            source.subscribe(
                AnyObserver { event in
                    Origin.with(Origin.joining(Origin.current, origin)) { observer.on(event) }
                }, in: lifetime)
        }
    }
}
