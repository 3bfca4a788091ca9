import Pipeline
import Reactive

private enum Key {
    static let count = Parameter<Int?>("count", doc: "How many elements to drop.", example: "1").atLeast(0)
    static let duration = Parameter<RxTimeInterval?>(
        "for", doc: "For how long after subscription to drop elements.", example: "1s")
}

extension BuiltinComponents {
    /// `skip: N` or `skip: {for: DURATION}` — drops the first elements.
    public static let skip = FirstElements.spec(
        name: "skip",
        summary: "Drops the first elements (a count, or those within a duration).",
        docs: "Completion and errors always pass.",
        count: Key.count, duration: Key.duration, example: "- skip: 1", left: "how many elements are left to drop",
        byCount: { $0.skip($1) }, byDuration: { $0.skip(for: $1, scheduler: $2) })
}
