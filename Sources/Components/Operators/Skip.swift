import Pipeline
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
        checkpointing: .depending("keeps how many elements are left to drop; 'for' cannot be checkpointed") { values in
            values.has(Key.count)
                ? .keepsState("how many elements are left to drop")
                : .unsupported("'skip: {for: …}' counts time from subscription, which a restart cannot resume")
        },
        factory: .operator { parameters, context in
            if let count = parameters[Key.count] {
                guard context.checkpoints != nil else { return { $0.skip(count) } }
                return { source in
                    Observable.deferred {
                        let left = StateBox(context.restoredState?.intValue ?? count)
                        context.keepState { .int(left.value) }
                        return source.filter { _ in
                            guard left.value > 0 else { return true }
                            left.value -= 1
                            return false
                        }
                    }
                }
            }
            let duration = parameters[Key.duration] ?? .zero
            return { $0.skip(for: duration, scheduler: context.scheduler) }
        }
    ).runningOnAnyThread()
}
