import Pipeline
import Reactive

private enum Key {
    static let count = Parameter<Int?>("count", doc: "How many elements.", example: "10").atLeast(0)
    static let duration = Parameter<RxTimeInterval?>("for", doc: "For how long after subscription.", example: "30s")
}

extension BuiltinComponents {
    /// `take: N` or `take: {for: DURATION}` — the first elements, then completion.
    public static let take = FirstElements.spec(
        name: "take",
        summary: "Passes on the first elements (a count, or those within a duration), then completes.",
        docs: "take: 0 completes at once without starting the source.",
        count: Key.count, duration: Key.duration, example: "- take: 10", left: "how many elements are left to pass",
        byCount: { $0.take($1) }, byDuration: { $0.take(for: $1, scheduler: $2) })
}
