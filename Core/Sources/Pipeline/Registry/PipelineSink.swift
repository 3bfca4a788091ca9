import Reactive

/// A sink, built: it receives a stream's events and is closed when the pipeline ends or stops.
/// An error thrown by either (a write that failed) fails the run, naming the sink.
public protocol PipelineSink: AnyObject {
    /// Receives one event of the stream.
    func receive(_ event: Event<Value>) throws
    /// Flushes and releases what the sink holds; called once, also after a signal.
    func close() throws
}

/// A sink whose work goes on after `receive` returns (requests still in flight, say): the run
/// waits for it before it ends, and it can fail the run later.
@_spi(Components) public protocol AsynchronousSink: PipelineSink {
    /// Called once, before the first event, on the pipeline's scheduler: `fail` ends the run with
    /// an error met after `receive` returned.
    func start(failing fail: @escaping (any Error) -> Void)
    /// Called after the sink received `completed`: it calls `done` on the pipeline's scheduler once
    /// its work has ended.
    func whenFinished(_ done: @escaping () -> Void)
}

/// A sink that buffers what it writes: `flush` makes what it received so far durable (in the
/// file, on the terminal). A message from a durable source is acknowledged once every sink that
/// received something it caused has flushed.
@_spi(Components) public protocol FlushingSink: PipelineSink {
    /// Writes out everything received so far.
    func flush() throws
}

/// A sink that settles the messages behind what it receives itself: it keeps `Origin.current`
/// with each element until its write is confirmed (a publish acknowledged, a response received),
/// and fails it when the write fails.
@_spi(Components) public protocol OriginKeepingSink: PipelineSink {}
