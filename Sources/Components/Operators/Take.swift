import Pipeline
import Reactive

private enum Key {
    static let count = Parameter<Int?>("count", doc: "How many elements.", example: "10").atLeast(0)
    static let duration = Parameter<RxTimeInterval?>("for", doc: "For how long after subscription.", example: "30s")
}

extension BuiltinComponents {
    /// `take: N` or `take: {for: DURATION}` — the first elements, then completion.
    public static let take = ComponentSpec(
        name: "take",
        summary: "Passes on the first elements (a count, or those within a duration), then completes.",
        docs: "take: 0 completes at once without starting the source.",
        parameters: [Key.count, Key.duration],
        primary: Key.count,
        example: "- take: 10",
        validate: { values, validation in validation.requireExactlyOne(Key.count, Key.duration, in: values) },
        checkpointing: .depending("keeps how many elements are left to pass; 'for' cannot be checkpointed") { values in
            values.has(Key.count)
                ? .keepsState("how many elements are left to pass")
                : .unsupported("'take: {for: …}' counts time from subscription, which a restart cannot resume")
        },
        factory: .operator { parameters, context in
            if let count = parameters[Key.count] {
                guard context.checkpoints != nil else { return { $0.take(count) } }
                return { source in
                    Observable.deferred {
                        let left = StateBox(context.restoredState?.intValue ?? count)
                        context.keepState { .int(left.value) }
                        return source.take(left.value).do(onNext: { _ in left.value -= 1 })
                    }
                }
            }
            let duration = parameters[Key.duration] ?? .zero
            return { $0.take(for: duration, scheduler: context.scheduler) }
        }
    ).runningOnAnyThread()
}
