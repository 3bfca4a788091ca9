import Reactive

/// The messages behind what a sink received and has not yet flushed. The first one held asks for
/// a flush on the scheduler, after the work already queued (so a batch of elements shares one
/// flush); after it, they are let go, and so acknowledged unless something else holds them. In a
/// run that keeps checkpoints they are handed to the next checkpoint instead: a resumed run cuts
/// a `file` sink back to the last checkpoint's length, so only a committed checkpoint makes what
/// was written durable.
final class SinkOrigins {
    private let sink: any PipelineSink
    private let scheduler: any SchedulerType
    private unowned let run: PipelineRun
    private let checkpoints: Checkpoints?
    private var held: [Origin] = []

    init(sink: any PipelineSink, scheduler: any SchedulerType, run: PipelineRun, checkpoints: Checkpoints?) {
        self.sink = sink
        self.scheduler = scheduler
        self.run = run
        self.checkpoints = checkpoints
        // A checkpoint syncs the sink and so holds what it wrote: what is held goes with it,
        // not after it (the next run would write it again over a file that has it).
        checkpoints?.beforeEachCheckpoint { [weak self] in
            guard let self, !self.held.isEmpty else { return }
            self.flush()
        }
    }

    func hold(_ origin: Origin) {
        held.append(origin)
        guard held.count == 1 else { return }
        // The flush works for every message held, not for the one current now.
        Origin.with(nil) { _ = scheduler.schedule { self.flush() } }
    }

    private func flush() {
        guard !run.lifetime.isDisposed else { return }
        do {
            try (sink as? any FlushingSink)?.flush()
        } catch {
            for origin in held { origin.fail(error) }
            held = []
            run.fail(error)
            return
        }
        letGo()
    }

    /// Lets go of what is held (the run has ended and its sinks are closed).
    func release() { letGo() }

    private func letGo() {
        checkpoints?.settleAtNextCommit(held)
        held = []
    }
}
