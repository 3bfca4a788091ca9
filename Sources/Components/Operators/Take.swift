import Pipeline
import Reactive

extension BuiltinComponents {
    /// `take: N` or `take: {for: DURATION}` — the first elements, then completion.
    public static let take = ComponentSpec(
        name: "take",
        summary: "Passes on the first elements (a count, or those within a duration), then completes.",
        docs: "take: 0 completes at once without starting the source.",
        parameters: [
            ParameterSpec("count", .int, doc: "How many elements.", example: "10"),
            ParameterSpec("for", .duration, doc: "For how long after subscription.", example: "30s"),
        ],
        primary: "count",
        example: "- take: 10",
        check: exactlyOne("count", "for"),
        factory: .operator { parameters, context in
            if let count = parameters.int("count") {
                return { $0.take(count) }
            }
            let duration = parameters.duration("for")!
            return { $0.take(for: duration, scheduler: context.scheduler) }
        })

    /// A check that exactly one of two parameters is given.
    static func exactlyOne(_ first: String, _ second: String) -> (ParameterValues) -> String? {
        { parameters in
            switch (parameters.has(first), parameters.has(second)) {
            case (false, false): return "give '\(first)' or '\(second)'"
            case (true, true): return "give '\(first)' or '\(second)', not both"
            default: return nil
            }
        }
    }
}
