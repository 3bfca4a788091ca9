import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Which components of a run `tap` and `top` mean: a place as `top` shows it (`ops.2`,
/// `streams.orders.ops.0`, `sinks.1`), a stream's name (`orders`: every place of that stream),
/// or a glob over places (`streams.*.source`, `*debounce*` matches a place or a component name).
struct PlacePattern {
    let text: String

    private var isStreamName: Bool {
        !text.isEmpty && !text.contains(".") && !text.contains(where: { "*?[".contains($0) })
    }

    /// Whether the component at `place`, named `component`, is meant.
    func matches(place: String, component: String) -> Bool {
        if place == text { return true }
        if isStreamName && place.hasPrefix("streams.\(text).") { return true }
        // The linear form's one stream: its source and operators.
        if text == "main" && !place.hasPrefix("streams.") && !place.hasPrefix("sink") { return true }
        return fnmatch(text, place, 0) == 0 || fnmatch(text, component, 0) == 0
    }

    /// The one place of `places` (with their component names, in the run's order) the pattern
    /// means, for `tap`: the place itself; for a stream's name, the last stage of that stream
    /// (what it emits); for a glob, its only match. Otherwise why not.
    func single(among places: [(place: String, component: String)]) -> Result<String, PatternError> {
        if places.contains(where: { $0.place == text }) { return .success(text) }
        let matching = places.filter { matches(place: $0.place, component: $0.component) }
        if isStreamName, let last = matching.last { return .success(last.place) }
        switch matching.count {
        case 1: return .success(matching[0].place)
        case 0:
            return .failure(
                PatternError("no component at '\(text)'; places: \(places.map(\.place).joined(separator: ", "))"))
        default:
            return .failure(
                PatternError(
                    "'\(text)' matches \(matching.count) places (\(matching.map(\.place).joined(separator: ", "))); tap takes one"
                ))
        }
    }

    struct PatternError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }
}
