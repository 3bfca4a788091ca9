/// An element type that can also spell a stateful operator's state: integers, lists and records
/// of itself. The pipeline's `Value` is one; a checkpoint stores the state as an element.
public protocol StateRepresentable {
    /// A whole number (a count, a duration in nanoseconds).
    init(stateInteger: Int)
    /// The whole number this is, if it is one.
    var stateInteger: Int? { get }
    /// A list.
    init(stateList: [Self])
    /// The list this is, if it is one.
    var stateList: [Self]? { get }
    /// A record of named fields.
    init(stateRecord: [(String, Self)])
    /// The field `name` of the record this is; nil if it is no record or has no such field.
    func stateField(_ name: String) -> Self?
}

extension StateRepresentable {
    /// A duration as a state keeps it: whole nanoseconds.
    @inlinable
    public init(stateDuration: RxTimeInterval) { self.init(stateInteger: Int(stateDuration.totalNanoseconds)) }

    /// The duration this is, if it is a whole number (of nanoseconds).
    @inlinable
    public var stateDuration: RxTimeInterval? { stateInteger.map { .nanoseconds(Int64($0)) } }
}

/// Where one stateful operator keeps its state between runs (`rivulet run --state`).
///
/// The operator's first subscription takes what a checkpoint restored and goes on from it; while
/// subscribed it answers `read()` with its state now and `heldOrigins()` with the origins of the
/// elements it holds. A checkpoint reads both between two events on the pipeline's scheduler,
/// commits the state, and then acknowledges those origins: their effect is durable in the
/// checkpoint. An operator given no `OperatorState` pays nothing.
public final class OperatorState<State> {
    private var restored: State?
    private var reader: (() -> State?)?
    private var originsReader: (() -> [Origin])?
    /// Which subscription registered last: an earlier one that ends later must not replace it.
    private var subscription = 0

    /// A place for an operator's state; `restoring` is what a checkpoint kept, if the run resumes.
    public init(restoring: State? = nil) {
        self.restored = restoring
    }

    /// What the checkpoint the run resumes from kept, handed out once: a later subscription (under
    /// `retry`, say) starts afresh.
    public func takeRestored() -> State? {
        defer { restored = nil }
        return restored
    }

    /// Registers how to read the current subscription's state and held origins, until `lifetime`
    /// ends; then what they read last is kept (the run's last checkpoint is taken after the
    /// pipeline stopped) and the subscription is let go of. A later subscription's registration
    /// replaces it.
    public func keep(_ read: @escaping () -> State?, origins: @escaping () -> [Origin], until lifetime: Lifetime) {
        reader = read
        originsReader = origins
        subscription &+= 1
        let registered = subscription
        lifetime.onDispose { [weak self] in
            guard let self, self.subscription == registered else { return }
            let last = read()
            let held = origins()
            self.reader = { last }
            self.originsReader = { held }
        }
    }

    /// The state now: the subscription's, or what was restored if nothing has taken it yet; nil
    /// when there is none.
    public func read() -> State? {
        if let reader { return reader() }
        return restored
    }

    /// The origins of the elements the operator holds now (none without a durable source).
    public func heldOrigins() -> [Origin] {
        originsReader?() ?? []
    }
}
