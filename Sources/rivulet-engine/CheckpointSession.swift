@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive
import StateStore

#if canImport(Glibc)
    import Glibc
#endif

/// A run's checkpoints on disk (`rivulet run --state PATH`): the store, locked for this
/// pipeline; what the run resumes from; and the final checkpoint when the run ends.
final class CheckpointSession {
    let store: StateStore
    /// The pipeline's name in the store.
    let name: String
    let shape: [String]
    /// The state the run resumes from (empty when it starts over).
    let restored: [String: Value]
    private var completing = false
    /// Told how long each checkpoint took to commit, in seconds (for `--metrics`).
    var onCommit: ((Double) -> Void)?

    /// Opens the store, locks the pipeline and reads its checkpoint. A checkpoint of a run that
    /// completed is only resumed with `resume`; one taken with another shape is refused.
    init(path: String, pipeline: ValidatedPipeline, file: String, resume: Bool) throws(StateStoreError) {
        store = try StateStore(path: path)
        name = pipeline.spec.name ?? Self.absolutePath(file)
        shape = CheckpointPlan.shape(of: pipeline)
        try store.lock(pipeline: name)
        guard let checkpoint = try store.load(name), !checkpoint.complete || resume else {
            restored = [:]
            return
        }
        if let difference = CheckpointPlan.difference(saved: checkpoint.shape, now: pipeline) {
            let at = difference.location.map { ", at \($0)" } ?? ""
            throw StateStoreError(
                "pipeline '\(name)' changed since its checkpoint in '\(path)' was taken: \(difference.text)\(at)",
                hint: "its state no longer fits; run `rivulet state \(path) --reset \(name)` to start it over")
        }
        restored = checkpoint.state
        RunLog.info("rivulet: resuming '\(name)' from checkpoint \(checkpoint.sequence) of '\(path)'")
    }

    /// Lets go of the pipeline's lock (under --watch, before the next version takes it).
    func close() { store.unlockAll() }

    static func absolutePath(_ file: String) -> String {
        guard let resolved = realpath(file, nil) else { return file }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The checkpoints of the run, committed to the store.
    func makeCheckpoints(scheduler: any SchedulerType, interval: RxTimeInterval) -> Checkpoints {
        Checkpoints(restored: restored, interval: interval, scheduler: scheduler) { [self] snapshot in
            // The commit's real duration (an fsync), whatever clock the pipeline runs on.
            let started = ContinuousClock.now
            try store.save(name, shape: shape, state: snapshot, complete: completing)
            if let onCommit {
                let elapsed = (ContinuousClock.now - started).components
                onCommit(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
            }
        }
    }

    /// After the run: the last checkpoint (complete if the run completed; none if it failed, so
    /// the next run redoes the work after the last good one). Returns the checkpoint failure.
    func finish(_ outcome: PipelineRun.Outcome?, checkpoints: Checkpoints) -> (any Error)? {
        if let failure = checkpoints.failure { return failure }
        switch outcome {
        case .completed?: completing = true
        case .failed?: return nil
        case .cancelled?, nil:
            // Stopped at a moment a resumed run could not go on from exactly (see
            // `resumesExactlyNow`): it goes on from the last checkpoint instead.
            if !checkpoints.resumesExactlyAtStop { return nil }
        }
        checkpoints.checkpoint()
        return checkpoints.failure
    }
}
