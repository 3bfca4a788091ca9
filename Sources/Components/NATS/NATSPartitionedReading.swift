import CNATS
import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// A `nats` source with `group` and `partitions`: the runners of the group divide the partitions
/// among themselves through leases in a JetStream key-value bucket (`PartitionLeases`), and this
/// runner reads each partition it holds, `subject.P`, through a durable consumer of its own,
/// `GROUP-pP`, so a partition is read in order by one runner at a time. A partition this runner
/// lets go of is handed over once what it fetched of it was settled; one whose lease was lost (a
/// stall past the lease timeout) stops being fetched at once.
final class NATSPartitionedReading: @unchecked Sendable {
    private let reading: NATSReading
    private let settings: NATSConsumerSettings
    private let group: String
    private let opened: @Sendable () -> Void
    private let ended: @Sendable ((any Error)?) -> Void
    private let condition = NSCondition()
    private var readers: [Int: NATSWorker] = [:]
    private var ticks = 0
    private var stopping = false
    private var runOver = false
    private var leadDone = false
    private let fence: LeaseFence

    init(
        reading: NATSReading, settings: NATSConsumerSettings, group: String, opened: @escaping @Sendable () -> Void,
        ended: @escaping @Sendable ((any Error)?) -> Void
    ) {
        self.reading = reading
        self.settings = settings
        self.group = group
        self.opened = opened
        self.ended = ended
        fence = LeaseFence(leaseTimeout: settings.leaseTimeout)
    }

    /// The key-value bucket of a group's leases.
    static func bucketName(_ group: String) -> String { "rivulet-leases-\(group)" }

    /// A runner's name in its group: the host, the process and a random part (two runs on one
    /// machine are two runners).
    static func runnerName() -> String {
        let host = ProcessInfo.processInfo.hostName.filter { $0.isLetter || $0.isNumber || $0 == "-" }
        return "\(host)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// The run's clock, for the rounds.
    var scheduler: any SchedulerType { reading.scheduler }

    /// Starts the lease thread, and says which group it reads (on the pipeline's thread).
    func start() {
        reading.context.value.log(
            "\(reading.name): reading \(settings.stream ?? "") in group \(group) on \(reading.endpoint.described)")
        let thread = Thread { [self] in lead() }
        thread.name = "nats leases \(group)"
        thread.start()
    }

    /// Time for the next round (every third of the lease timeout, on the run's clock).
    func tick() {
        condition.withLock {
            ticks += 1
            condition.signal()
        }
    }

    /// Drains: the partitions are read no more, what was fetched is settled, the leases are let go.
    func stop() {
        condition.withLock {
            stopping = true
            condition.signal()
        }
    }

    /// The run is over: stop waiting for settlements.
    func finish() {
        let workers = condition.withLock {
            stopping = true
            runOver = true
            condition.signal()
            return Array(readers.values)
        }
        for worker in workers { worker.finish() }
        // The leases are let go of right after: others take the partitions at once.
        condition.withLock {
            let limit = Date(timeIntervalSinceNow: 5)
            while !leadDone && condition.wait(until: limit) {}
        }
    }

    private func lead() {
        defer {
            condition.withLock {
                leadDone = true
                condition.broadcast()
            }
        }
        // A cluster still electing leaders (the buckets just made with their copies) is waited
        // for, as a consumer that cannot be made yet is.
        let retry = JetStreamRetry(
            lostAfter: reading.endpoint.lostAfter, now: { [reading] in reading.scheduler.now },
            report: { [reading, group] line in reading.report("group \(group): \(line)") },
            pause: {
                self.condition.withLock {
                    if !self.stopping {
                        _ = self.condition.wait(until: Date(timeIntervalSinceNow: JetStreamRetry.pauseSeconds))
                    }
                    return self.stopping
                }
            })
        let connection: NATSConnection
        let leases: PartitionLeases
        do {
            guard let joined = try retry.run(join) else { return ended(nil) }
            (connection, leases) = joined
        } catch {
            return ended(error)
        }
        defer { connection.close() }
        var first = true
        var failing = false
        while !condition.withLock({ stopping }) {
            let roundStartedAt = reading.scheduler.now
            do {
                try renew(leases, js: connection.jetStream)
                failing = false
            } catch {
                // The server away: the readers go on (their connections reconnect); leases not
                // renewed within the lease timeout are found lost at the next round that works.
                if !failing { reading.report("group \(group): cannot renew the leases (\(error)); trying again") }
                failing = true
            }
            if first {
                first = false
                opened()
            }
            waitForTheNextRound(after: roundStartedAt)
        }
        drain(leases)
    }

    /// Waits for the run's clock to tick, or for a third of the lease timeout since the last round
    /// began if the tick is late: the tick waits behind what the pipeline's thread has queued (a
    /// busy runner's fetched batches), and a renewal held up by that would lose a runner that
    /// keeps up its leases, and meet its own fence.
    private func waitForTheNextRound(after roundStartedAt: RxTime) {
        let due = roundStartedAt + settings.leaseTimeout / 3
        condition.withLock {
            while ticks == 0 && !stopping {
                let left = due - reading.scheduler.now
                if left <= .zero { break }
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(left.totalNanoseconds) / 1e9))
            }
            ticks = 0
        }
    }

    /// Connects, makes sure of the stream (`subject.*`) and of the group's lease bucket.
    private func join() throws -> (NATSConnection, PartitionLeases) {
        let connection = try NATSConnection(
            reading.endpoint, name: "rivulet \(reading.name) leases", report: reading.report)
        do {
            guard let js = connection.jetStream, let stream = settings.stream, let subject = settings.subject else {
                throw NATSSetupError("a partitioned nats source needs stream and subject")
            }
            try NATSStreams.ensure(
                stream, subjects: "\(subject).*", create: settings.create, replicas: settings.replicas, js: js,
                endpoint: reading.endpoint.described)
            // The buckets have the stream's replicas: a cluster that keeps the stream keeps them.
            let bucket = try NATSLeaseBucket(
                name: Self.bucketName(group), timeToLive: settings.leaseTimeout, replicas: settings.replicas, js: js)
            if let states = reading.states {
                states.store = try NATSLeaseBucket(
                    name: GroupPartitionStates.bucketName(group), timeToLive: .zero, replicas: settings.replicas, js: js
                )
                states.stopReading = { [weak self] partition in self?.readAgain(partition) }
            }
            // What `rivulet partitions` shows of the group, kept with the leases.
            let description = NATSGroupStatus.describe(
                stream: stream, subject: subject, partitions: settings.partitions)
            if let running = try bucket.entries()[NATSGroupStatus.descriptionKey]?.value,
                let disagreement = NATSGroupStatus.disagreement(running, description)
            {
                throw NATSSetupError(
                    "group '\(group)' \(disagreement): every runner of a group must read the same partitions "
                        + "(stop the others, or name another group)")
            }
            let leases = PartitionLeases(
                runner: Self.runnerName(), partitions: settings.partitions, bucket: bucket,
                alsoKeep: [NATSGroupStatus.descriptionKey: description],
                handOver: { [self] partition in handOver(partition) },
                willHandOver: { [self] partitions in
                    let leaving = condition.withLock { partitions.compactMap { readers[$0] } }
                    for worker in leaving { worker.stop() }
                },
                runnerEntry: { [reading] held in
                    NATSGroupStatus.runnerEntry(watermarks: reading.watermarks?.watermarks(of: held) ?? [:])
                })
            return (connection, leases)
        } catch {
            connection.close()
            throw error
        }
    }

    /// One round: the leases renewed, a lost partition read no more, a held one read (taken, or
    /// its reader stopped by the fence).
    private func renew(_ leases: PartitionLeases, js: OpaquePointer?) throws {
        let startedAt = reading.scheduler.now
        let changes = try leases.round()
        fence.vouch(for: Set(leases.held.keys), roundStartedAt: startedAt)
        for partition in changes.lost {
            reading.report("lost partition \(partition) of group \(group) (its lease expired): reading it no more")
            let worker = condition.withLock { readers.removeValue(forKey: partition) }
            worker?.retire()
            forgetState(of: partition)
        }
        let unread = condition.withLock { leases.held.keys.filter { readers[$0] == nil }.sorted() }
        for partition in unread { startReader(partition) }
        measure(leases, js: js)
        if !changes.acquired.isEmpty || !changes.released.isEmpty {
            let held = leases.held.keys.sorted().map(String.init).joined(separator: ",")
            let list = { (partitions: [Int]) in partitions.sorted().map(String.init).joined(separator: ",") }
            var moves: [String] = []
            if !changes.acquired.isEmpty { moves.append("took \(list(changes.acquired))") }
            if !changes.released.isEmpty { moves.append("handed over \(list(changes.released))") }
            reading.report(
                "group \(group): holding partitions \(held.isEmpty ? "none" : held) (\(moves.joined(separator: ", ")))")
        }
    }

    /// Drained: every reader stops fetching, and the source ends, so that operators holding
    /// messages (an `aggregate`'s open windows) emit and let go of them; once each reader's
    /// messages are settled the leases go, at once, to the others.
    private func drain(_ leases: PartitionLeases) {
        let workers = condition.withLock { readers }
        // All stop fetching at once (each fetch waits up to 500 ms), then each is waited for.
        for worker in workers.values { worker.stop() }
        for worker in workers.values { worker.stopAndWaitUntilFetched() }
        ended(nil)
        for (_, worker) in workers.sorted(by: { $0.key < $1.key }) {
            if condition.withLock({ runOver }) { worker.finish() } else { worker.stopAndWaitUntilDone() }
        }
        condition.withLock { readers = [:] }
        do { _ = try leases.stop() } catch { reading.report("group \(group): cannot let go of the leases: \(error)") }
    }

    /// A watched run's view of the group, every round: how many partitions this runner holds,
    /// whether it holds each, and how many messages of each wait to be delivered (the group's lag,
    /// the same from every runner).
    private func measure(_ leases: PartitionLeases, js: OpaquePointer?) {
        guard let meter = reading.meter, let js, let stream = settings.stream else { return }
        meter.gauge("nats_partitions_held", leases.held.count)
        // Under --state each partition has the consumer its holder made when it took it.
        let current = reading.states.flatMap { states in
            (try? states.store?.entries()).map(GroupPartitionStates.currentConsumers(in:))
        }
        for partition in 0..<settings.partitions {
            let label = ("partition", String(partition))
            meter.gauge("nats_partition_held", label: label, leases.held[partition] == nil ? 0 : 1)
            var info: UnsafeMutablePointer<jsConsumerInfo>?
            var code = jsErrCode(rawValue: 0)
            let consumer = current?[partition] ?? "\(group)-p\(partition)"
            if js_GetConsumerInfo(&info, js, stream, consumer, nil, &code) == NATS_OK, let info {
                meter.gauge("nats_partition_pending", label: label, Int(info.pointee.NumPending))
            }
            jsConsumerInfo_Destroy(info)
        }
    }

    /// Reads `partition` through its own durable consumer; under --state, from the state its
    /// last owner stored (left unread this round if that cannot be read: the next one tries again).
    private func startReader(_ partition: Int) {
        var partitionSettings = settings
        var coverage: NATSCoverage?
        if let states = reading.states {
            do {
                let claimed = try states.claim(partition)
                partitionSettings.restartsFromState = true
                if let floor = claimed.position?["floor"]?.intValue { partitionSettings.restartAt = UInt64(floor + 1) }
                let taken = NATSCoverage(restoring: claimed.position)
                coverage = taken
                // Before any message of the partition reaches the pipeline's thread, and after
                // what an earlier round let go of it there (a lost partition's letGo).
                let state = SchedulerBound(claimed.state)
                let name = claimed.consumer
                partitionSettings.durable = name
                partitionSettings.replaces = claimed.previous
                reading.scheduler.enqueue { [positions = reading.positions] in
                    positions?.install(name, taken)
                    states.take(partition, state: state.value, revision: claimed.revision, consumer: name)
                }
            } catch {
                reading.report("partition \(partition) of group \(group): cannot read its stored state (\(error))")
                return
            }
        }
        partitionSettings.subject = "\(settings.subject ?? "").\(partition)"
        if partitionSettings.replaces == nil { partitionSettings.durable = "\(group)-p\(partition)" }
        partitionSettings.resultIDName = "\(group)-p\(partition)"
        partitionSettings.create = false
        partitionSettings.group = nil
        partitionSettings.partition = partition
        let workerBox = WorkerBox()
        let partitionFence = partitionFence(for: partition, workerBox)
        let worker = reading.start(
            partitionSettings, fence: partitionFence, coverage: coverage, opened: {},
            ended: { [self] failure in
                if let failure { ended(failure) }
            })
        let fencedAlready = condition.withLock {
            workerBox.worker = worker
            if !workerBox.isFenced { readers[partition] = worker }
            return workerBox.isFenced
        }
        // Met the fence before it was known here: as `restartReader` does for the current reader.
        if fencedAlready {
            worker.retire()
            forgetState(of: partition)
        }
    }

    /// The fence `partition`'s reader delivers behind: a batch that meets it (the lease not
    /// vouched for), or deliveries of its consumer found missing, stop the reader, and the next
    /// round reads the partition again.
    private func partitionFence(for partition: Int, _ workerBox: WorkerBox) -> PartitionFence {
        PartitionFence(
            fence: fence, partition: partition,
            fenced: { [self] in
                restartReader(
                    partition, workerBox,
                    because: "its lease was not renewed in time (was the runner stalled?); "
                        + "what was fetched of it goes back to the stream")
            },
            deliveriesLost: { [self] lost in
                let which =
                    lost.count == 1 ? "delivery \(lost.lowerBound)" : "deliveries \(lost.lowerBound)-\(lost.upperBound)"
                restartReader(
                    partition, workerBox,
                    because: "\(which) of its consumer never arrived (a server or cluster node lost on the way?); "
                        + "reading it again, in order, from its stored state")
            })
    }

    /// A batch of `partition` met the fence (no round vouched for its lease lately), or its reader
    /// found deliveries missing: the reader stops, the partition's state here is forgotten, and
    /// the next round that renews the lease starts a new reader from the stored state.
    /// Only the partition's current reader forgets its state: an older one (stopped already,
    /// its partition read again by a newer reader) leaves the newer one's chain alone.
    private func restartReader(_ partition: Int, _ box: WorkerBox, because reason: String) {
        reading.report("partition \(partition) of group \(group): \(reason)")
        let (current, old) = condition.withLock { () -> (NATSWorker?, NATSWorker?) in
            box.isFenced = true
            guard let worker = box.worker else { return (nil, nil) }
            guard readers[partition] === worker else { return (nil, worker) }
            readers[partition] = nil
            return (worker, nil)
        }
        old?.retire()
        guard let current else { return }
        current.retire()
        forgetState(of: partition)
    }

    /// Under --state, a partition's state could not be stored: its reader stops, and the next
    /// round reads it again from what is stored (if this runner still holds it).
    private func readAgain(_ partition: Int) {
        let worker = condition.withLock { readers.removeValue(forKey: partition) }
        worker?.retire()
    }

    /// Under --state, forgets a partition's state here without storing it (lost, fenced): what
    /// it did since its last stored checkpoint is done again by its next owner.
    private func forgetState(of partition: Int) {
        guard let states = reading.states else { return }
        reading.scheduler.enqueue { states.letGo(partition) }
    }

    /// A surplus partition: stop fetching it, wait until what was fetched of it is settled.
    /// Under --state, once what was fetched is processed, a checkpoint stores its state for the
    /// next owner and acknowledges what that holds.
    private func handOver(_ partition: Int) {
        guard let worker = condition.withLock({ readers.removeValue(forKey: partition) }) else { return }
        // Once the run is over its last checkpoint stored every partition: nothing runs a new one.
        if let states = reading.states, !condition.withLock({ runOver }) {
            worker.stopAndWaitUntilFetched()
            let stored = DispatchSemaphore(value: 0)
            reading.scheduler.enqueue {
                states.handOver(partition)
                stored.signal()
            }
            // A pipeline's thread that is gone (the run ending) stores nothing more: the next
            // owner starts from the last checkpoint.
            _ = stored.wait(timeout: .now() + 10)
        }
        worker.stopAndWaitUntilDone()
    }
}

/// The worker a fence's callback stops, known once the reader has started (under the lock).
private final class WorkerBox: @unchecked Sendable {
    var worker: NATSWorker?
    /// Set by the fence's callback, which may come before `worker` is.
    var isFenced = false
}
