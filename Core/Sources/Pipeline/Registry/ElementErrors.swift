import Reactive

/// What a component does with one element it cannot handle (a line that is not JSON, an
/// expression that fails on it, a row the database refuses): the `onError` parameter.
@_spi(Components) public enum ElementErrorPolicy: String, ParameterChoice, Sendable {
    /// Fail the pipeline, naming the component and the element (the default).
    case fail
    /// Drop the element and go on; the run's summary counts what was dropped.
    case skip
    /// Drop the element and send a report of it to the component's `NAME.errors` side stream.
    case errors
}

/// The `onError` parameter that every component handling elements one at a time takes, and the
/// shape of what it sends to `NAME.errors`.
public enum ElementErrors {
    /// `onError: fail | skip | errors`.
    @_spi(Components) public static let onError = Parameter<ElementErrorPolicy>(
        "onError", default: .fail,
        doc:
            "What an element this component cannot handle does. fail: the pipeline fails. skip: it is dropped and counted. errors: it is dropped and reported on NAME.errors as {error, element, component, location, at}."
    )

    /// The report of a failed element: the message, the element (or the text that could not be
    /// read as one), the component and its place in the file, and the time in milliseconds since
    /// the pipeline started, on its clock (as `now()` reads it).
    @_spi(Components) public static func report(
        message: String, element: Value?, component: String, location: SourceLocation, at time: RxTime
    ) -> Value {
        var report = JSONObject()
        report["error"] = .string(message)
        report["element"] = element ?? .null
        report["component"] = .string(component)
        report["location"] = .string(location.description)
        report["at"] = .int(Int(time.totalNanoseconds / 1_000_000))
        return .object(report)
    }
}

/// The elements dropped under `onError: skip`, per component, for the run's summary.
@_spi(Host) public final class SkippedElements {
    /// One component's count and the first error it dropped.
    public struct Entry {
        /// The component's name.
        public let component: String
        /// Where it is in the file.
        public let location: SourceLocation
        /// Elements dropped.
        public var count: Int
        /// The message of the first.
        public let firstMessage: String
        /// Why they were dropped.
        public var reason = "it could not handle (onError: skip)"
        /// Whether they are errors (`onError: skip`), rather than dropped on purpose (late).
        public var areErrors = true
    }

    /// Elements dropped under `onError: skip`: the run summary's errors.
    public var errors: Int { entries.reduce(0) { $0 + ($1.areErrors ? $1.count : 0) } }
    /// Elements dropped on purpose (late ones): not errors, counted apart.
    public var dropped: Int { entries.reduce(0) { $0 + ($1.areErrors ? 0 : $1.count) } }

    /// Every component that dropped something, in the order they first did.
    public private(set) var entries: [Entry] = []

    /// An empty tally.
    public init() {}

    func add(component: String, location: SourceLocation, message: String) {
        if let index = entries.firstIndex(where: { $0.location == location && $0.component == component }) {
            entries[index].count += 1
        } else {
            entries.append(Entry(component: component, location: location, count: 1, firstMessage: message))
        }
    }

    /// Counts an element `component` dropped on purpose, saying why (`reason`) in the summary.
    public func dropped(component: String, location: SourceLocation, reason: String, message: String) {
        if let index = entries.firstIndex(where: { $0.location == location && $0.component == component }) {
            entries[index].count += 1
        } else {
            var entry = Entry(component: component, location: location, count: 1, firstMessage: message)
            entry.reason = reason
            entry.areErrors = false
            entries.append(entry)
        }
    }

    /// One line per component, for standard error at the end of a run.
    public var summary: [String] {
        entries.map { entry in
            "\(entry.location): warning: \(entry.component) skipped \(entry.count) element\(entry.count == 1 ? "" : "s") \(entry.reason); the first: \(entry.firstMessage)"
        }
    }
}

extension ComponentContext {
    /// Counts a failure this component went on after under `onError: skip` without going through
    /// `elementFailed` (an inner source of `flatMap` that failed), for the run's summary.
    public func skipped(_ error: any Error) {
        let message = (error as? PipelineRuntimeError)?.message ?? "\(error)"
        meter?.count("elements_dropped_total")
        shared(SkippedElements.self) { SkippedElements() }.add(
            component: componentName, location: location, message: message)
    }

    /// Counts an element this component dropped on purpose (a late element), saying why
    /// (`reason`) in the run's summary, with the first one's `message`.
    @_spi(Components) public func dropped(reason: String, message: String) {
        shared(SkippedElements.self) { SkippedElements() }.dropped(
            component: componentName, location: location, reason: reason, message: message)
    }
}
