import Reactive

/// A source, built: given the element that triggers it (null at the top of a stream, the outer
/// element inside `flatMapLatest`), the observable of what it emits.
public struct PipelineSource {
    /// Makes the observable for one triggering element.
    public let make: (Value) -> Observable<Value>
    /// For sources that fetch pages (the HTTP sources): a reader that fetches one page at a time,
    /// when asked, for `scanPaginate`.
    public let pages: ((Value) -> any PageReader)?
    /// For sources that can run the element-wise operators after them on several threads
    /// (`parallel:`): the observable for one triggering element with that stretch applied.
    public let parallel: ((Value, ParallelStretch) -> Observable<Value>)?

    /// A source from a function of the triggering element; `parallel`, if given, also runs the
    /// stretch after it.
    public init(
        _ make: @escaping (Value) -> Observable<Value>,
        parallel: ((Value, ParallelStretch) -> Observable<Value>)? = nil
    ) {
        self.make = make
        self.pages = nil
        self.parallel = parallel
    }

    /// A paged source: `make` for every page in a row, `pages` to read one page at a time.
    public init(_ make: @escaping (Value) -> Observable<Value>, pages: @escaping (Value) -> any PageReader) {
        self.make = make
        self.pages = pages
        self.parallel = nil
    }
}

/// The element-wise operators right after a source, handed to it to run on several threads
/// (`parallel: N`): it applies them to each element it reads, on up to `workers` threads, and
/// emits what they give in the order it read the elements.
public struct ParallelStretch {
    /// How many threads may run the stretch at once.
    public let workers: Int
    /// Makes one worker's step: each worker calls it once (a step keeps its own scope).
    public let makeStep: () -> ElementStep
    /// Tells the source's meter about elements the stretch dropped, so it still counts all it read.
    public let dropped: (Int) -> Void

    /// A stretch of `workers` threads.
    public init(workers: Int, makeStep: @escaping () -> ElementStep, dropped: @escaping (Int) -> Void) {
        self.workers = workers
        self.makeStep = makeStep
        self.dropped = dropped
    }
}

/// Reads a paged source one page at a time.
public protocol PageReader: AnyObject {
    /// Whether the last page has been fetched.
    var isFinished: Bool { get }
    /// Fetches the next page: emits its items as one array, then completes.
    func nextPage() -> Observable<Value>
}

/// An operator, built: a function from the stream it reads to the stream it emits.
public typealias PipelineOperator = (Observable<Value>) -> Observable<Value>

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
public protocol AsynchronousSink: PipelineSink {
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
public protocol FlushingSink: PipelineSink {
    /// Writes out everything received so far.
    func flush() throws
}

/// A sink that settles the messages behind what it receives itself: it keeps `Origin.current`
/// with each element until its write is confirmed (a publish acknowledged, a response received),
/// and fails it when the write fails.
public protocol OriginKeepingSink: PipelineSink {}
