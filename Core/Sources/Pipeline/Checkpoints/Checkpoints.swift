@_spi(Components) import Reactive

/// The checkpoints of one run. Every stateful component registers how to read its state; between
/// two events on the pipeline's scheduler (when every operator's state is consistent) the run
/// reads them all into one snapshot and hands it to `commit` (the state store's transaction).
/// Components find it as a service of the run; without one, a run keeps no state.
@_spi(Components) public final class Checkpoints {
    /// What each component held at the checkpoint this run resumes from, by component key, until
    /// the component takes it.
    public private(set) var restored: [String: Value]
    /// Whether the run resumes from a checkpoint (it was handed one to restore).
    public let resumes: Bool
    /// How often a checkpoint is taken.
    public let interval: RxTimeInterval
    private let scheduler: any SchedulerType
    private let commit: (Value) throws -> Void
    private typealias Reader = (read: () throws -> Value, origins: (() -> [Origin])?)
    /// Every component's reader by key; a snapshot lists them in key order, the same each time.
    private var readers: [String: Reader] = [:]
    /// The keys registered for each `groupBy` group's chain, by the group's key prefix.
    private var groups: [String: [String]] = [:]
    private var nextDue: RxTime
    private var opportunities = 0
    /// The error of the checkpoint that failed (a full disk, a write error); the run then stops.
    public private(set) var failure: (any Error)?
    /// Called once when a checkpoint fails, to stop the run.
    public var onFailure: ((any Error) -> Void)?
    /// How many checkpoints were committed.
    public private(set) var committed = 0
    /// What must stop while a checkpoint reads the state (partitions on threads of their own).
    private var barriers: [ObjectIdentifier: any CheckpointBarrier] = [:]

    /// Has `barrier` paused around every checkpoint's reading of the state, until `remove`.
    @_spi(Host) public func add(_ barrier: any CheckpointBarrier) {
        barriers[ObjectIdentifier(barrier)] = barrier
    }

    /// Stops pausing `barrier`.
    @_spi(Host) public func remove(_ barrier: any CheckpointBarrier) {
        barriers[ObjectIdentifier(barrier)] = nil
    }

    /// Checkpoints every `interval` on `scheduler`'s clock, resuming from `restored`; `commit`
    /// stores a snapshot (an object of component key → state) and throws if it cannot.
    public init(
        restored: [String: Value], interval: RxTimeInterval, scheduler: any SchedulerType,
        commit: @escaping (Value) throws -> Void
    ) {
        self.restored = restored
        self.resumes = !restored.isEmpty
        self.interval = interval
        self.scheduler = scheduler
        self.commit = commit
        self.nextDue = scheduler.now + interval
    }

    /// What the component `key` held at the checkpoint the run resumes from. It is handed out
    /// once: a component subscribed again later (under `retry`, say) starts afresh.
    public func takeRestoredState(_ key: String) -> Value? {
        restored.removeValue(forKey: key)
    }

    /// Registers how to read the state of the component `key`; a later registration under the
    /// same key (a resubscription) replaces it. `group` is the key prefix of the `groupBy` group
    /// whose chain the component is in, if it is in one.
    public func register(_ key: String, read: @escaping () throws -> Value, group: String?) {
        register(key, (read, nil), group: group)
    }

    /// `register(_:read:group:)` for a component in no group.
    public func register(_ key: String, read: @escaping () throws -> Value) {
        register(key, (read, nil), group: nil)
    }

    /// Registers a runtime operator's state under `key`: a checkpoint reads its state and, once
    /// committed, settles the origins of the elements it holds (their effect is in the checkpoint).
    public func register(_ key: String, state: OperatorState<Value>, group: String?) {
        register(key, ({ state.read() ?? .null }, state.heldOrigins), group: group)
    }

    /// `register(_:state:group:)` for an operator in no group.
    public func register(_ key: String, state: OperatorState<Value>) {
        register(key, state: state, group: nil)
    }

    /// Where sources that read a durable input keep how far it is done, by component key: read
    /// after every operator's state, once the origins the checkpoint keeps were told
    /// (`Origin.checkpointing()`), so the position names exactly what the snapshot holds.
    private var positions: [String: (read: () throws -> Value, committed: () -> Void)] = [:]

    /// What runs before each checkpoint reads the state: sinks hand over the messages behind
    /// what they wrote and have not flushed yet (`SinkOrigins`), since the checkpoint's reading
    /// of the sink syncs it and so holds what they caused.
    private var beforeReading: [() -> Void] = []

    /// Runs `body` at the start of every checkpoint, before any state is read.
    public func beforeEachCheckpoint(_ body: @escaping () -> Void) {
        beforeReading.append(body)
    }

    /// Registers a source's position under `key`: `read` says which of its input the checkpoint
    /// being taken holds (read last, after the operators' state), and `committed` is called once
    /// that snapshot is committed (before the origins it keeps are settled), when what `read`
    /// counted may be acknowledged. A later registration under the same key replaces it.
    public func registerPosition(_ key: String, read: @escaping () throws -> Value, committed: @escaping () -> Void) {
        positions[key] = (read, committed)
    }

    /// What a snapshot goes through before it is committed, in the order registered.
    private var participants: [(inout JSONObject) throws -> Void] = []

    /// Has `body` take part in every commit: it gets the snapshot once every state and position
    /// is read, before it is committed, and may store part of it elsewhere and take it out (a
    /// group's partition state, kept in the group's own store so that it moves with the
    /// partition). What it leaves is committed; an error fails the checkpoint.
    public func beforeCommit(_ body: @escaping (inout JSONObject) throws -> Void) {
        participants.append(body)
    }

    /// What sees every snapshot once it is read, in the order registered.
    private var readersOfSnapshots: [(JSONObject) -> Void] = []

    /// Has `body` see every snapshot once every state and position is read, before any
    /// `beforeCommit` participant takes part of it out (a watched `partitionBy` measures each
    /// partition's state there).
    @_spi(Host) public func afterReading(_ body: @escaping (JSONObject) -> Void) {
        readersOfSnapshots.append(body)
    }

    /// Gives components built from now on `values` to restore, by key, as if the run had resumed
    /// from them (a partition this runner takes over, whose chain is built again).
    public func restore(_ values: [String: Value]) {
        restored.merge(values) { _, new in new }
    }

    /// Lets go of the readers, and of any restored state not taken, of every key that starts
    /// with `prefix` (a partition's chain this runner no longer runs).
    public func forget(keysStartingWith prefix: String) {
        for key in readers.keys where key.hasPrefix(prefix) { readers[key] = nil }
        for key in restored.keys where key.hasPrefix(prefix) { restored[key] = nil }
    }

    private func register(_ key: String, _ reader: Reader, group: String?) {
        if readers.updateValue(reader, forKey: key) == nil, let group { groups[group, default: []].append(key) }
    }

    /// Lets go of the state of a `groupBy` group's chain once the chain completed: a later group
    /// of the same key starts afresh. (A group within it has completed, and been let go of, first:
    /// a chain completes only once every chain it runs has.)
    public func forget(group prefix: String) {
        for key in groups.removeValue(forKey: prefix) ?? [] { readers[key] = nil }
    }

    /// Lets go of every component's reader once the last checkpoint of the run is taken: the
    /// operators' state (which a reader keeps readable after the run stopped, for that last
    /// checkpoint) is freed, and the messages it held are settled.
    public func end() {
        ended = true
        readers.removeAll()
        groups.removeAll()
        settling.removeAll()
        positions.removeAll()
        beforeReading.removeAll()
        participants.removeAll()
    }

    /// Set by `end()`: a checkpoint asked for later (`checkpoint()` from an enqueued block) would
    /// commit an empty snapshot over the run's last one.
    private var ended = false

    /// The messages whose elements sinks wrote since the last checkpoint: a resumed run cuts a
    /// `file` sink back to the length the last checkpoint committed, so what it wrote after is
    /// not durable until the next one commits; they are settled then.
    private var settling: [Origin] = []

    /// Settles `origins` once the next checkpoint commits (a sink wrote their elements).
    public func settleAtNextCommit(_ origins: [Origin]) {
        settling += origins
    }

    /// Takes a checkpoint if one is due. Sources that emit in a loop call this between two
    /// elements, so a checkpoint need not wait for the loop to end.
    @inline(__always)
    public func checkpointIfDue() {
        opportunities &+= 1
        guard opportunities & 255 == 0 else { return }
        if scheduler.now >= nextDue { checkpointIfExact() }
    }

    /// Whether a run resumed from a checkpoint taken now would go on exactly as this one. Not on
    /// a virtual clock with two actions due at one tick: they run in the order they were
    /// scheduled, and a resumed run schedules them again as it restores, maybe in another order
    /// (a `throttle`'s timer and a source's next element due at one millisecond: the element it
    /// sends differs). A real clock's order at one instant is not repeatable anyway.
    @_spi(Host) public var resumesExactlyNow: Bool {
        guard let clock = scheduler as? VirtualTimeScheduler else { return true }
        return !clock.hasActionsDueTogether
    }

    /// Says the run is being stopped, before its timers are cancelled: whether the run's last
    /// checkpoint, taken once it stopped, would resume exactly is as it is now.
    @_spi(Host) public func runStopping() {
        if exactAtStop == nil { exactAtStop = resumesExactlyNow }
    }

    /// Whether the last checkpoint of a stopped run would resume exactly (`resumesExactlyNow` when
    /// `runStopping()` was called, or now): if not, a resumed run goes on from the one before.
    @_spi(Host) public var resumesExactlyAtStop: Bool { exactAtStop ?? resumesExactlyNow }

    private var exactAtStop: Bool?

    /// A due checkpoint, taken once `resumesExactlyNow`, or one interval late if that never comes
    /// (two timers of one period, always due together).
    private func checkpointIfExact() {
        guard resumesExactlyNow || scheduler.now >= nextDue + interval else { return }
        checkpoint()
    }

    /// Checks every `interval` whether a checkpoint is due, for the times no source is emitting
    /// in a loop (a followed file that is idle, timers). Dispose of it when the run ends.
    public func startTimer() -> any Disposable {
        // Unowned, not weak: a weak reference gives this object a side table, and every retain
        // and release of it (a source's `checkpointIfDue` per element) takes the slow path. The
        // timer is disposed when the run ends, before the checkpoints go.
        scheduler.schedulePeriodic(startAfter: interval, period: interval) { [unowned self] in
            guard self.scheduler.now >= self.nextDue else { return }
            self.checkpointIfExact()
        }
    }

    /// Takes a checkpoint now: reads every component's state (sinks flush and sync what they
    /// wrote) and commits the snapshot; then the messages whose elements operators hold in that
    /// state are settled (acknowledged), since the checkpoint now keeps them. A failure is kept in
    /// `failure` and stops the run.
    public func checkpoint() {
        guard failure == nil, !ended else { return }
        nextDue = scheduler.now + interval
        do {
            var snapshot = JSONObject()
            var kept: [Origin] = []
            for body in beforeReading { body() }
            let paused = Array(barriers.values)
            for barrier in paused { barrier.pause() }
            defer { for barrier in paused { barrier.resume() } }
            for (key, reader) in readers.sorted(by: { $0.key < $1.key }) {
                snapshot[key] = try reader.read()
                if let origins = reader.origins { kept += origins() }
            }
            // A component that has not taken its restored state yet (a sink that opens its file
            // at its first element, a group not seen again) still holds it: keep it.
            for (key, value) in restored.sorted(by: { $0.key < $1.key }) where snapshot[key] == nil {
                snapshot[key] = value
            }
            // After the readers: a sink's reader commits what it wrote, and hands over its
            // messages. `settling` is emptied only once the commit succeeded: after a failed one,
            // what the sinks wrote must not be let go (it would be acknowledged before the run is
            // abandoned).
            kept += settling
            // The positions last: they count what the snapshot holds, the kept messages included.
            for origin in kept { origin.checkpointing() }
            for (key, position) in positions.sorted(by: { $0.key < $1.key }) {
                snapshot[key] = try position.read()
            }
            for body in readersOfSnapshots { body(snapshot) }
            for participant in participants { try participant(&snapshot) }
            try commit(.object(snapshot))
            settling = []
            committed += 1
            for position in positions.values { position.committed() }
            for origin in kept { origin.checkpointed() }
        } catch {
            failure = error
            onFailure?(error)
        }
    }
}

/// Work on other threads that a checkpoint must stop while it reads the state: `pause` returns
/// once the work is stopped at a point where its state is consistent with what it passed on, on
/// the pipeline's thread; `resume` lets it go on.
@_spi(Host) public protocol CheckpointBarrier: AnyObject {
    /// Stops the work; called on the pipeline's thread.
    func pause()
    /// Lets it go on.
    func resume()
}
