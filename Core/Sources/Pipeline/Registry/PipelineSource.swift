import Reactive

/// A source, built: given the element that triggers it (null at the top of a stream, the outer
/// element inside `flatMapLatest`), the observable of what it emits.
public struct PipelineSource {
    /// Makes the observable for one triggering element.
    public let make: (Value) -> Observable<Value>
    /// For sources that fetch pages (the HTTP sources): a reader that fetches one page at a time,
    /// when asked, for `scanPaginate`.
    @_spi(Components) public let pages: ((Value) -> any PageReader)?
    /// For sources that can run the element-wise operators after them on several threads
    /// (`parallel:`): the observable for one triggering element with that stretch applied.
    @_spi(Components) public let parallel: ((Value, ParallelStretch) -> Observable<Value>)?

    /// A source from a function of the triggering element.
    public init(_ make: @escaping (Value) -> Observable<Value>) {
        self.init(make, parallel: nil)
    }

    /// A source from a function of the triggering element; `parallel`, if given, also runs the
    /// stretch after it.
    @_spi(Components) public init(
        _ make: @escaping (Value) -> Observable<Value>, parallel: ((Value, ParallelStretch) -> Observable<Value>)?
    ) {
        self.make = make
        self.pages = nil
        self.parallel = parallel
    }

    /// A paged source: `make` for every page in a row, `pages` to read one page at a time.
    @_spi(Components) public init(
        _ make: @escaping (Value) -> Observable<Value>, pages: @escaping (Value) -> any PageReader
    ) {
        self.make = make
        self.pages = pages
        self.parallel = nil
    }
}

/// The element-wise operators right after a source, handed to it to run on several threads
/// (`parallel: N`): it applies them to each element it reads, on up to `workers` threads, and
/// emits what they give in the order it read the elements.
@_spi(Components) public struct ParallelStretch {
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
@_spi(Components) public protocol PageReader: AnyObject {
    /// Whether the last page has been fetched.
    var isFinished: Bool { get }
    /// Fetches the next page: emits its items as one array, then completes.
    func nextPage() -> Observable<Value>
}
