@_spi(Host) import Pipeline
import Reactive

private enum Key {
    static let count = Parameter<Int?>("count", doc: "How many elements to drop.", example: "1").atLeast(0)
    static let duration = Parameter<RxTimeInterval?>(
        "for", doc: "For how long after subscription to drop elements.", example: "1s")
}

extension BuiltinComponents {
    /// `skip: N` or `skip: {for: DURATION}` — drops the first elements.
    public static let skip = ComponentSpec(
        name: "skip",
        summary: "Drops the first elements (a count, or those within a duration).",
        docs: "Completion and errors always pass.",
        parameters: [Key.count, Key.duration],
        primary: Key.count,
        example: "- skip: 1",
        validate: { values, validation in validation.requireExactlyOne(Key.count, Key.duration, in: values) },
        factory: .operator { parameters, context in
            if let count = parameters[Key.count] {
                return { $0.skip(count) }
            }
            let duration = parameters[Key.duration] ?? .zero
            return { $0.skip(for: duration, scheduler: context.scheduler) }
        })
}
