import Dispatch
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive

#if canImport(Glibc)
    import Glibc
#endif

/// The threads a `partitionBy` runs its partitions on in a real-time run. Each runs a serial run
/// loop of its own, so a partition's operators take no locks and keep their timers there, as on
/// the pipeline's thread; partition `p` of `n` runs on thread `p % threads`.
final class PartitionThreads: @unchecked Sendable {
    let loops: [SerialRunLoopScheduler]
    /// The machine's cores: what `threads: auto` uses.
    static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }
    /// Room for batches not yet taken, per thread: the pipeline's thread waits for a thread that
    /// falls behind instead of queueing without bound.
    private let room: [DispatchSemaphore]

    init(count: Int, batchesAhead: Int = 64) {
        loops = (0..<count).map { _ in SerialRunLoopScheduler() }
        room = (0..<count).map { _ in DispatchSemaphore.credits(batchesAhead) }
        proceed = (0..<count).map { _ in DispatchSemaphore(value: 0) }
    }

    func start() {
        for (index, loop) in loops.enumerated() {
            let thread = Thread {
                Self.nameThisThread("partition-\(index)")
                ThreadHeap.grow(to: ThreadHeap.partitionBytes)
                loop.run()
                // Stopped: what was sent after the last work (a batch behind a failure) never
                // runs, and is let go of rather than keeping the partition's chain alive.
                loop.close()
            }
            thread.name = "rivulet-partition-\(index)"
            thread.start()
        }
    }

    /// Names the calling thread as `top -H`, `ps -L` and /proc show it (at most 15 bytes; on Linux
    /// `Thread.name` does not reach that name). Glibc's `pthread_setname_np` is not imported.
    private static func nameThisThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        guard descriptor >= 0 else { return }
        _ = Array(name.utf8.prefix(15)).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    /// Runs `work` on thread `index`, after waiting for room there.
    func send(to index: Int, _ work: @escaping @Sendable () -> Void) {
        room[index].wait()
        let room = room[index]
        loops[index].enqueue {
            work()
            room.signal()
        }
    }

    /// Runs `work` on thread `index` and waits for it: for making what that thread alone will
    /// touch, in its own memory. (The semaphore orders the thread's writes before the return.)
    func perform<Made>(on index: Int, _ work: () -> Made) -> Made {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome<Made>()
        withoutActuallyEscaping(work) { work in
            outcome.work = work
            loops[index].enqueue {
                outcome.made = outcome.work!()
                // Let go of `work` before the caller goes on: it must not outlive the call.
                outcome.work = nil
                done.signal()
            }
            done.wait()
        }
        return outcome.made!
    }

    /// What `perform`'s work gave, handed from its thread to the waiting one.
    private final class Outcome<Made>: @unchecked Sendable {
        var work: (() -> Made)?
        var made: Made?
    }

    /// Runs `work` on thread `index` without waiting for room (starting, ending, disposing).
    func control(_ index: Int, _ work: @escaping @Sendable () -> Void) {
        loops[index].enqueue(work)
    }

    /// Runs `last` on each thread after what it was sent, then ends the thread; returns once
    /// every thread has run it (what they did is then seen by the caller).
    func stop(after last: @escaping @Sendable (Int) -> Void) {
        // Stopped while paused (what a checkpoint passed on ended the run): the threads go on to
        // their end first, or they would wait for a resume that comes after this returns.
        if isPaused { resume() }
        let done = DispatchSemaphore(value: 0)
        for (index, loop) in loops.enumerated() {
            loop.enqueue {
                last(index)
                loop.stop()
                done.signal()
            }
        }
        for _ in loops { done.wait() }
    }

    /// Has every thread run `work` after what it was sent, then wait until `resume`; returns once
    /// all of them are waiting (what they did is then seen by the caller).
    func pause(with work: @escaping @Sendable (Int) -> Void) {
        for (index, loop) in loops.enumerated() {
            // One semaphore per thread: with one for all, a thread slow to wake from the last
            // pause would leave its signal to one already in the next.
            let (arrived, proceed) = (arrived, proceed[index])
            loop.enqueue {
                work(index)
                arrived.signal()
                proceed.wait()
            }
        }
        for _ in loops { arrived.wait() }
        isPaused = true
    }

    /// Lets the threads `pause` stopped go on (nothing if they are not paused).
    func resume() {
        guard isPaused else { return }
        isPaused = false
        for proceed in proceed { proceed.signal() }
    }

    /// Whether `pause` stopped the threads and `resume` has not let them go on (read and written
    /// on the pipeline's thread only).
    private var isPaused = false

    private let arrived = DispatchSemaphore(value: 0)
    private let proceed: [DispatchSemaphore]
}

/// Elements for one partition, sent to its thread in one piece. On event time each carries its
/// own time and the run's event-time clock when it was sent (see `PartitionLane.receive`).
struct PartitionBatch: @unchecked Sendable {
    /// One element's place and times. Holding no value, it is freed and refilled without a
    /// per-element step (the pipeline's thread destroyed every entry's null value once).
    struct Entry {
        var time: Int64
        var mark: Int64
        /// The element's number in the stream (for `PartitionOrder`).
        var sequence: Int64 = 0
        /// Where in `packed` the element is, or -1: it is the next of `elements`.
        var packedAt: Int = -1
    }

    var entries: [Entry] = []
    /// The elements not packed (an object an operator built, a number), in their entries' order.
    var elements: [Value] = []
    /// The elements that are objects read on demand, as their bytes (`JSONParser.pack`), up to
    /// `packedEnd` (what lies past it is room left from an earlier filling).
    var packed: [UInt8] = []
    var packedEnd = 0
    /// The run's event-time clock when the batch was sent, for the partition to follow.
    var mark: Int64?
}

/// Batches a partition has delivered, on their way back to the pipeline's thread: what is left of
/// their elements is freed there, where it was made (glibc frees a block from another thread's
/// arena under that arena's lock, and the thread that made it then allocates afresh instead of
/// reusing it), and their storage is filled again.
final class ReturnedBatches: @unchecked Sendable {
    private let lock = NSLock()
    private var batches: [PartitionBatch] = []

    func giveBack(_ batch: consuming PartitionBatch) {
        lock.lock()
        batches.append(batch)
        lock.unlock()
    }

    /// Moves what came back since last asked into `spare`. Both arrays keep their room: handing
    /// over the array itself had the pipeline's thread free arrays grown on a partition's thread,
    /// waiting on that thread's arena lock.
    func take(into spare: inout [PartitionBatch]) {
        lock.lock()
        defer { lock.unlock() }
        guard !batches.isEmpty else { return }
        spare.append(contentsOf: batches)
        batches.removeAll(keepingCapacity: true)
    }
}

/// One partition's chain in a threaded run: touched only on its thread once started.
final class PartitionLane: @unchecked Sendable {
    /// Its own event time, following the run's (nil off event time), and what it offers the
    /// chain's first operator.
    let domain: EventTimeDomain<Value>?
    let offer: EventTimeOffer?
    private var input: EventTimeDomain<Value>.Input?
    /// The chain's input, once the chain subscribed.
    private var feed: AnyObserver<Value>?
    let lifetime: Lifetime
    /// Where the partition's results go among all partitions' (nil: they go as they come).
    let order: PartitionOrder?
    /// The stream's clock this partition has done, once a batch was delivered (with `order`).
    private var doneUpTo: Int64?

    init(domain: EventTimeDomain<Value>?, lifetime: Lifetime, order: PartitionOrder? = nil) {
        self.domain = domain
        self.lifetime = lifetime
        self.order = order
        offer = domain.map { EventTimeOffer(domain: $0) }
    }

    /// The chain as its elements come in: subscribe to it on the lane's thread.
    var source: Observable<Value> {
        Observable { [self] observer, subscription in
            feed = observer
            // The chain's first sink leads, through the chain, to its outbox, which holds this
            // lane: let go of it (and of the input that reaches it) when the chain is disposed.
            subscription.onDispose { [weak self] in
                guard let self else { return }
                self.feed = nil
                if let subscribed = self.input { self.domain?.remove(subscribed) }
                self.input = nil
            }
            guard let domain, let offer else { return }
            // Its watermark is given (`drive`), not read from its elements.
            let input = EventTimeDomain<Value>.Input(maxDelay: 0) { observer.on(.next($0)) }
            input.isDriven = true
            input.asTheyCome = offer.isTaken
            input.ended = { observer.on(.completed) }
            domain.add(input)
            self.input = input
        }
    }

    /// Delivers a batch: on event time, each element once the partition's clock is where the
    /// run's was when the element was sent, so each is on time, late or waiting exactly as it
    /// was in the run's own event time.
    func receive(_ batch: consuming PartitionBatch, returning returned: ReturnedBatches) {
        deliver(batch)
        if order != nil {
            // What the batch made goes now, saying how far the clock was done: the results of
            // every window ending before it may then go on.
            if let mark = batch.mark ?? batch.entries.last?.mark { doneUpTo = mark }
            flushOutbox(evenIfEmpty: true)
        }
        // The batch is given back, not copied: a copy still held here when the pipeline's thread
        // fills it again would make that thread copy it, every element retained.
        returned.giveBack(batch)
    }

    /// This lane's objects made from packed elements, filled again once the chain let go of them
    /// (touched on the lane's thread alone, so not checked for exclusive access).
    @exclusivity(unchecked) private var scratch = JSONParser.Scratch()

    /// The element of `entry`: unpacked from `batch`'s bytes, else the next of its elements
    /// (`elementsUsed` counts those taken so far).
    private func element(
        of entry: PartitionBatch.Entry, in batch: borrowing PartitionBatch, elementsUsed: inout Int
    ) -> Value {
        guard entry.packedAt >= 0 else {
            elementsUsed += 1
            return batch.elements[elementsUsed - 1]
        }
        return batch.packed.withUnsafeBytes { JSONParser.unpack(at: entry.packedAt, of: $0, reusing: &scratch) }
    }

    private func deliver(_ batch: borrowing PartitionBatch) {
        guard let feed, !lifetime.isDisposed else { return }
        if let domain, let input {
            // Held here: read through `domain` for every element, the clock was retained and
            // released around each call into it.
            let clock = domain.clock
            var elementsUsed = 0
            for entry in batch.entries {
                // Moving the clock shows only when work is due by then, when elements wait for
                // it, or when this element is behind it (late): otherwise it is left for later.
                // It starts at the stream's clock, not at the first element's time (an element
                // a little behind that one would be late).
                if !clock.isStarted || !input.asTheyCome || entry.time < entry.mark
                    || entry.mark >= clock.nextDue ?? .max
                {
                    domain.drive(input, to: entry.mark)
                }
                let element = self.element(of: entry, in: batch, elementsUsed: &elementsUsed)
                order?.sequence = entry.sequence
                // Never late here: the partition's clock is the stream's at every element (a silent
                // drop here was a bug once; tests run with assertions).
                let taken = domain.take(element, at: entry.time, from: input)
                assert(taken, "a partition dropped an element the stream took, as late")
            }
            // The clock ends each batch where the stream's was when it was sent: a checkpoint
            // keeps operators' times relative to it, and the run that resumes restores it.
            if let mark = batch.mark ?? batch.entries.last?.mark { domain.drive(input, to: mark) }
        } else {
            var elementsUsed = 0
            for entry in batch.entries {
                order?.sequence = entry.sequence
                feed.on(.next(element(of: entry, in: batch, elementsUsed: &elementsUsed)))
            }
        }
    }

    private var outgoing = PartitionOutput()
    private var outgoingPending = false

    /// An observer for the chain's output on thread `loop`: what the chain emits in one turn of
    /// the loop (a batch, a timer) goes to `send` together, once the turn is done.
    func outbox(on loop: SerialRunLoopScheduler, _ send: @escaping (PartitionOutput) -> Void) -> AnyObserver<Value> {
        self.send = send
        return AnyObserver { [self] event in
            if let order, case .next(let value) = event {
                outgoing.values.append(value)
                outgoing.places.append(order.place ?? .last)
                order.place = nil
            } else {
                outgoing.events.append(event)
            }
            guard !outgoingPending else { return }
            outgoingPending = true
            loop.schedule { [self] in flushOutbox() }
        }
    }

    private var send: ((PartitionOutput) -> Void)?

    /// Sends what the chain emitted so far now (a checkpoint's pause, the end).
    func flushOutbox(evenIfEmpty: Bool = false) {
        outgoingPending = false
        guard !outgoing.isEmpty || evenIfEmpty, let send else { return }
        var output = PartitionOutput()
        swap(&output, &outgoing)
        output.doneUpTo = doneUpTo
        send(output)
    }

    /// Delivers one element at once (partitions on the pipeline's thread).
    func deliver(_ element: Value) {
        feed?.on(.next(element))
    }

    /// The partition's input ended.
    func end() {
        guard let feed, !lifetime.isDisposed else { return }
        if let domain, let input { domain.end(input) } else { feed.on(.completed) }
    }
}

/// What a partition emitted in one turn of its thread: the events, and how far the partition has
/// done the stream's clock. With `PartitionOrder`, the objects it emitted are in `values`, each
/// with its place (so they move into the order's queues without a reference count changing
/// hands), and only its end is in `events`.
struct PartitionOutput {
    var events: [Event<Value>] = []
    var values: [Value] = []
    var places: [ResultPlace] = []
    var doneUpTo: Int64?

    var isEmpty: Bool { events.isEmpty && values.isEmpty }

    init(doneUpTo: Int64? = nil) {
        self.doneUpTo = doneUpTo
    }

    /// One event of an ordered partition (on the pipeline's thread): an object, at `place`.
    init(_ event: Event<Value>, at place: ResultPlace) {
        if case .next(let value) = event {
            values = [value]
            places = [place]
        } else {
            events = [event]
        }
    }
}

/// One partition's output on its way to the pipeline's thread, with the thread that made it.
struct PartitionPost {
    var thread: Int
    var partition: Int
    var output: PartitionOutput
    var events: [Event<Value>] {
        get { output.events }
        set { output.events = newValue }
    }
}

/// What the partitions emitted, on its way to the pipeline's thread: each thread's posts, in the
/// order they came, kept apart so that each can go back to the thread that made its elements.
final class PartitionMailbox: @unchecked Sendable {
    private let lock = NSLock()
    private var posts: [PartitionPost] = []
    private var wakeAsked = false

    /// Posts `new` of partition `partition` from thread `thread` (on that thread); true when the
    /// pipeline's thread is to be asked to take them (it was not asked since it last took).
    func post(_ new: PartitionOutput, of partition: Int, from thread: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        posts.append(PartitionPost(thread: thread, partition: partition, output: new))
        let wake = !wakeAsked
        wakeAsked = true
        return wake
    }

    /// Everything posted since last taken, post by post.
    func take() -> [PartitionPost] {
        lock.lock()
        defer { lock.unlock() }
        wakeAsked = false
        var taken: [PartitionPost] = []
        swap(&taken, &posts)
        return taken
    }

    /// The elements waiting, for a checkpoint.
    var elements: Value {
        lock.lock()
        defer { lock.unlock() }
        return .array(
            posts.flatMap { post in
                post.output.values
                    + post.events.compactMap { event in
                        if case .next(let element) = event { return element }
                        return nil
                    }
            })
    }
}
