import Reactive

/// A started pipeline: dispose it to stop (sinks are closed either way).
@_spi(Host) public final class PipelineRun: Disposable {
    /// How a run ended.
    public enum Outcome {
        /// Every sink's stream completed.
        case completed
        /// A stream failed.
        case failed(any Error)
        /// It was stopped from outside (a signal, the end of a test).
        case cancelled
    }

    /// How it ended, once it has.
    public private(set) var outcome: Outcome?
    let lifetime = Lifetime()
    var pendingSinks = 0
    private var isFinishing = false
    private let sinks: [any PipelineSink]
    private let ending: RunEnding
    var sinkOrigins: [SinkOrigins] = []
    private let onFinish: (Outcome) -> Void

    init(sinks: [any PipelineSink], ending: RunEnding, onFinish: @escaping (Outcome) -> Void) {
        self.sinks = sinks
        self.ending = ending
        self.onFinish = onFinish
    }

    func sinkCompleted() {
        pendingSinks -= 1
        checkFinished()
    }

    func checkFinished() {
        if pendingSinks == 0 && outcome == nil { finish(.completed) }
    }

    func fail(_ error: any Error) {
        finish(.failed(error))
    }

    private func finish(_ result: Outcome) {
        guard !isFinishing else { return }
        isFinishing = true
        // Messages let go while a failed or stopped run is torn down were not finished: they go back.
        if case .completed = result {} else { ending.isAbandoned = true }
        lifetime.dispose()
        // A sink that cannot write out what it holds fails a run that would otherwise succeed.
        var final = result
        for sink in sinks {
            do { try sink.close() } catch {
                if case .failed = final { continue }
                final = .failed(error)
            }
        }
        // Only now, with every sink closed (flushed), are the messages behind what they wrote let go.
        if case .completed = final {} else { ending.isAbandoned = true }
        for origins in sinkOrigins { origins.release() }
        outcome = final
        onFinish(final)
    }

    /// Stops the pipeline: releases every subscription and timer, closes every sink.
    public func dispose() {
        finish(.cancelled)
    }
}
