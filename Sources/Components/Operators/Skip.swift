import Pipeline
import Reactive

extension BuiltinComponents {
    /// `skip: N` or `skip: {for: DURATION}` — drops the first elements.
    public static let skip = ComponentSpec(
        name: "skip",
        summary: "Drops the first elements (a count, or those within a duration).",
        docs: "Completion and errors always pass.",
        parameters: [
            ParameterSpec("count", .int, doc: "How many elements to drop.", example: "1"),
            ParameterSpec("for", .duration, doc: "For how long after subscription to drop elements.", example: "1s"),
        ],
        primary: "count",
        example: "- skip: 1",
        check: exactlyOne("count", "for"),
        factory: .operator { parameters, context in
            if let count = parameters.int("count") {
                return { $0.skip(count) }
            }
            let duration = parameters.duration("for")!
            return { $0.skip(for: duration, scheduler: context.scheduler) }
        })
}
