import CNATS
import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// What every JetStream consumer of one `nats` source shares: where its messages go (the
/// pipeline's thread), how they are decoded, and where what a user should see is said.
struct NATSReading: @unchecked Sendable {
    let endpoint: NATSEndpoint
    let decoder: NATSDecoder
    let target: NATSTarget
    let context: SchedulerBound<ComponentContext>
    let scheduler: any ConcurrentDeliveryScheduler
    let report: @Sendable (String) -> Void
    let ending: RunEnding
    let meter: ComponentMeter?
    let name: String
    /// Under --state, which messages of each consumer the checkpoints hold.
    var positions: NATSPositions?
    /// Under --state, where a group keeps each partition's state.
    var states: GroupPartitionStates?
    /// A group runner's partitions, each a lane of its own for `eventTime`.
    var lanes: SchedulerBound<EventLanes>?
    /// In a group: the partitions' watermarks an `eventTime` after the source publishes, kept with
    /// the runner's lease entry.
    var watermarks: PartitionWatermarks?

    /// Starts a thread that reads the consumer `settings` name into the pipeline until its
    /// worker is stopped; `opened` once the consumer is in place, `ended` when the thread is
    /// done (with the failure that ended it, if one did) and every message it fetched settled.
    /// A partition's reader delivers behind its `fence`: once a batch met it, that batch and
    /// every later one go back to the stream (the reader is stopped, and started afresh by the
    /// next round that renews the lease, so the partition's order is kept).
    /// `coverage` (a partition taken over under --state) replaces the run's coverage of the consumer.
    func start(
        _ settings: NATSConsumerSettings, fence: PartitionFence? = nil, coverage: NATSCoverage? = nil,
        opened: @escaping @Sendable () -> Void, ended: @escaping @Sendable ((any Error)?) -> Void
    ) -> NATSWorker {
        let fenced = SchedulerBound(FenceMet())
        let worker = NATSWorker()
        let lane = openLane(settings.partition)
        let thread = Thread {
            let connection: NATSConnection
            do {
                connection = try NATSConnection(endpoint, name: "rivulet \(name)", report: report)
            } catch {
                closeLane(lane)
                worker.markDone()
                return ended(error)
            }
            let consumer = makeConsumer(settings, on: connection, coverage: coverage)
            defer {
                consumer.close()
                connection.close()
                worker.markDone()
            }
            // A reader stopped while JetStream did not answer (a partition lost meanwhile) ends as
            // one stopped after it opened.
            do {
                guard try open(consumer, unless: worker) else {
                    closeLane(lane)
                    return ended(nil)
                }
            } catch {
                closeLane(lane)
                return ended(worker.isStopped ? nil : error)
            }
            opened()
            // Signalled while connecting: the source ends as a drained one does (not at the
            // drain timeout).
            guard worker.begin(consumer) else {
                closeLane(lane)
                return ended(nil)
            }
            let scheduler = scheduler
            let mayFetch = fence.map { fence in
                { fence.fence.verdict(fence.partition, at: scheduler.now) == .deliver }
            }
            let failure = consumer.fetchLoop(mayFetch: mayFetch) { messages in
                deliver(messages, from: consumer, by: worker, fence: fence.map { ($0, fenced) }, lane: lane)
            }
            if let fence { Self.tell(fence, why: consumer) }
            // Before waiting for settlements: what waits for the watermark no longer waits for this lane.
            closeLane(lane)
            worker.markFetched()
            ended(failure)
            // Acknowledgements still to come go out on this connection: wait for the messages
            // in flight to be settled (the run ends them one way or the other) before closing.
            worker.waitUntilSettled(consumer)
        }
        thread.name = "nats \(settings.durable ?? "")"
        thread.start()
        return worker
    }

    /// Tells a partition's fence why its reader stopped fetching, when it was not asked to: the
    /// fence met before a fetch (as when a batch meets it, the reader is let go of and the next
    /// round that renews the lease starts another), or deliveries lost on the way (the partition
    /// is read again, in order, from its stored state).
    private static func tell(_ fence: PartitionFence, why consumer: NATSConsumer) {
        if consumer.stoppedByFence { fence.fenced() }
        if let lost = consumer.lostDeliveries { fence.deliveriesLost(lost) }
    }

    /// The consumer `settings` names, on `connection`; under --state, with which of its messages
    /// the checkpoints hold (`coverage`, or the run's).
    private func makeConsumer(
        _ settings: NATSConsumerSettings, on connection: NATSConnection, coverage: NATSCoverage?
    ) -> NATSConsumer {
        NATSConsumer(
            connection: connection, settings: settings, ending: ending, meter: meter, pipeline: scheduler,
            coverage: coverage ?? settings.durable.flatMap { positions?.coverage(of: $0) },
            checkpointSoon: positions == nil ? nil : checkpointSoon, report: report)
    }

    /// A partition's lane, opened on the pipeline's thread before any of its messages arrive there.
    private func openLane(_ partition: Int?) -> SchedulerBound<LaneSlot>? {
        guard let lanes, let partition else { return nil }
        let slot = SchedulerBound(LaneSlot())
        scheduler.enqueue {
            let lane = EventLane(number: partition, lanes: lanes.value)
            slot.value.lane = lane
            lanes.value.opened(lane)
        }
        return slot
    }

    /// Closes a partition's lane on the pipeline's thread, after its last message there.
    private func closeLane(_ slot: SchedulerBound<LaneSlot>?) {
        guard let lanes, let slot else { return }
        scheduler.enqueue {
            if let lane = slot.value.lane { lanes.value.closed(lane) }
        }
    }

    /// Opens `consumer`, waiting out JetStream's passing errors (a cluster electing a leader):
    /// false if the reader was stopped meanwhile.
    private func open(_ consumer: NATSConsumer, unless worker: NATSWorker) throws -> Bool {
        let retry = JetStreamRetry(
            lostAfter: endpoint.lostAfter, now: { [scheduler] in scheduler.now }, report: report,
            pause: {
                worker.pause(seconds: JetStreamRetry.pauseSeconds)
                return worker.isStopped
            })
        return try retry.run { try consumer.open() } != nil
    }

    /// Asks the pipeline's thread for a checkpoint now: the messages done wait for one to be
    /// acknowledged, and the consumer has no room for more.
    private var checkpointSoon: @Sendable () -> Void {
        let context = context
        return { [scheduler] in scheduler.enqueue { context.value.checkpoints?.checkpoint() } }
    }

    /// Emits a message's element; one that cannot be decoded is an element error (routed by
    /// `onError`), on the pipeline's thread.
    static func emit(
        _ message: OpaquePointer, decoder: NATSDecoder, to observer: AnyObserver<Value>, context: ComponentContext
    ) {
        do {
            observer.on(.next(try decoder.decode(message)))
        } catch {
            do {
                try context.elementFailed(
                    context.error("message is not JSON: \(error)"), element: .string(NATSDecoder.text(of: message)))
            } catch {
                observer.on(.error(error))
            }
        }
    }

    /// Hands a fetched batch to the pipeline's thread, each message the origin of its element.
    /// A retired reader's batch goes back: it was fetched before the reader was stopped and
    /// reaches the pipeline's thread after the partition's chain was emptied or built again.
    private func deliver(
        _ messages: [OpaquePointer], from consumer: NATSConsumer, by worker: NATSWorker,
        fence: (PartitionFence, SchedulerBound<FenceMet>)?, lane: SchedulerBound<LaneSlot>?
    ) {
        let batch = SchedulerBound(messages)
        let bound = SchedulerBound(consumer)
        let (target, boundContext, decoder, scheduler) = (target, context, decoder, scheduler)
        scheduler.enqueue {
            let consumer = bound.value
            let context = boundContext.value
            if fence != nil, worker.isRetired {
                for message in batch.value { consumer.giveBack(message) }
                return
            }
            if let (fence, met) = fence,
                met.value.isMet || fence.fence.verdict(fence.partition, at: scheduler.now) != .deliver
            {
                for message in batch.value { consumer.giveBack(message) }
                if !met.value.isMet { fence.fenced() }
                met.value.isMet = true
                return
            }
            for message in batch.value {
                guard let observer = target.live else {
                    consumer.giveBack(message)
                    continue
                }
                let sequence = consumer.coverage == nil ? 0 : NATSDecoder.streamSequence(of: message)
                if consumer.isCovered(sequence) {
                    consumer.settle(message, failure: nil, sequence: sequence)
                    continue
                }
                guard consumer.admit(message, sequence: sequence) else { continue }
                let delivery = NATSDelivery(
                    message: message, consumer: consumer, sequence: sequence, lane: lane?.value.lane)
                Origin.with(delivery) { Self.emit(message, decoder: decoder, to: observer, context: context) }
            }
        }
    }
}

/// A partition reader's lane, known on the pipeline's thread once it opened.
final class LaneSlot {
    var lane: EventLane?
}

/// Whether a reader's batches met its fence (read and written on the pipeline's thread only).
final class FenceMet {
    var isMet = false
}
