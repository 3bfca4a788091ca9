@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// What `skip` and `take` share: they act on the first elements, given as a count (`N`, kept in
/// checkpoints as how many are left) or a duration from subscription (`{for: DURATION}`, which a
/// restart cannot resume). Each runs the runtime's own operator; a checkpointed count only
/// counts the elements that reach it.
enum FirstElements {
    /// A `name` component over the first `count` elements or those within `duration`, built with
    /// `byCount` and `byDuration`; `left` says what its checkpoints keep ("how many elements are
    /// left to drop").
    static func spec(
        name: String, summary: String, docs: String, count: Parameter<Int?>, duration: Parameter<RxTimeInterval?>,
        example: String, left: String,
        byCount: @escaping @Sendable (Observable<Value>, Int) -> Observable<Value>,
        byDuration: @escaping @Sendable (Observable<Value>, RxTimeInterval, any SchedulerType) -> Observable<Value>
    ) -> ComponentSpec {
        ComponentSpec(
            name: name, summary: summary, docs: docs, parameters: [count, duration], primary: count,
            example: example,
            validate: { values, validation in validation.requireExactlyOne(count, duration, in: values) },
            checkpointing: .depending("keeps \(left); 'for' cannot be checkpointed") { values in
                values.has(count)
                    ? .keepsState(left)
                    : .unsupported(
                        "'\(name): {for: …}' counts time from subscription, which a restart cannot resume")
            },
            factory: .operator { parameters, context in
                guard let first = parameters[count] else {
                    let within = parameters[duration] ?? .zero
                    return { byDuration($0, within, context.scheduler) }
                }
                guard context.checkpoints != nil else { return { byCount($0, first) } }
                return { source in
                    Observable.deferred {
                        let remaining = StateBox(context.restoredState?.intValue ?? first)
                        context.keepState { .int(remaining.value) }
                        let counted = source.do(onNext: { _ in
                            if remaining.value > 0 { remaining.value -= 1 }
                        })
                        return byCount(counted, remaining.value)
                    }
                }
            }
        ).runningOnAnyThread()
    }
}
