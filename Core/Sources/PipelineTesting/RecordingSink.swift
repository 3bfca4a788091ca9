import Pipeline
import Reactive

/// A sink that keeps every event it receives with the time it came, and how often it was closed:
/// the one recording sink of `rivulet test`, the component and compiler tests, and
/// `PipelineTestBench`. `time` reads the clock in
/// the unit its owner compares (a virtual clock's ticks, microseconds).
@_spi(Components) public final class RecordingSink: PipelineSink {
    /// What it received, in order, each with the time it came.
    public private(set) var events: [(time: Int, event: Event<Value>)] = []
    /// How many times it was closed (once, in a run that ended or was stopped).
    public private(set) var closed = 0
    private let time: () -> Int

    /// The elements it received, in order.
    public var values: [Value] {
        events.compactMap { if case .next(let value) = $0.event { value } else { nil } }
    }

    /// A sink that stamps each event with `time()`.
    public init(time: @escaping () -> Int) {
        self.time = time
    }

    /// Keeps `event` with the time it came.
    public func receive(_ event: Event<Value>) {
        events.append((time(), event))
    }

    /// Counts the close.
    public func close() {
        closed += 1
    }
}
