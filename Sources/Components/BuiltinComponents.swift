@_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive

/// Rivulet's built-in sources, operators and sinks.
///
/// Each is declared in its own file (spec and factory side by side) against the same API that
/// plugins use; this list registers them.
public enum BuiltinComponents {
    /// Every built-in component.
    public static var all: [ComponentSpec] {
        [
            // Sources
            Timelines.events, fixture, fileSource, execSource, sqliteSource, postgresSource, httpServer, natsSource,
            stdin, prompt,
            interval,
            timer, http,
            nytSearch,
            nytNewest,
            githubSearch,
            githubUserRepos,
            images,
            foursquareSearch,
            // Operators
            filter, map, scan, distinctUntilChanged, debounce, throttle, delay, timeout, take, skip, takeWhile,
            takeUntil, startWith, merge, combineLatest, withLatestFrom, flatMap, flatMapLatest, concatMap, action,
            scanPaginate, reduce, zip, sample, dedupe, lookup, window, aggregate, groupBy, partitionBy, eventTime,
            catchError, catchAndReturn, retry, buffer, share, log, exec, wasm,
            // Sinks
            stdout, file, table, status, sqliteSink, postgresSink, httpSink, natsSink,
        ]
    }
}

extension RxTimeInterval {
    /// The shortest time the clocks tell apart: a window, period or gap shorter than it would
    /// never end (or end at every step), so lint refuses one.
    static let clockResolution = RxTimeInterval.milliseconds(1)
}
