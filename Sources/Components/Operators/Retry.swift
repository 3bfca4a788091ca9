@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let attempts = Parameter<Int>("max", default: 3, doc: "Attempts in all.", example: "5").atLeast(1)
    static let backoff = Parameter<RxTimeInterval?>(
        "backoff", doc: "The wait before the second attempt (no wait when absent).", example: "500ms")
    static let maxBackoff = Parameter<RxTimeInterval>("maxBackoff", default: .seconds(30), doc: "The longest wait.")
    static let jitter = Parameter<Double>("jitter", default: 0.5, doc: "The random fraction of each wait, 0 to 1.")
        .atLeast(0.0)
}

extension BuiltinComponents {
    /// `retry: N` or `retry: {max, backoff, maxBackoff, jitter}` — subscribe again after an error.
    public static let retry = ComponentSpec(
        name: "retry",
        summary: "Subscribes to the stream again after an error, up to a number of attempts in all.",
        docs: """
            max counts every subscription, the first included (RxSwift's rule: retry: 3 is three attempts). \
            With backoff, each new attempt waits an exponentially growing delay (doubling, capped at \
            maxBackoff), of which the jitter fraction is random (from the pipeline's seed).
            """,
        parameters: [Key.attempts, Key.backoff, Key.maxBackoff, Key.jitter],
        primary: Key.attempts,
        example: "- retry: { max: 5, backoff: 500ms }",
        checkpointing: .keepsState(
            "how many attempts failed (after a restart, the backoff starts again from its first wait)"),
        factory: .operator { parameters, context in
            let attempts = parameters[Key.attempts]
            let backoff = parameters[Key.backoff]
            guard context.checkpoints != nil else { return retrying(attempts, backoff, parameters, context) }
            let checkpoints = context.checkpoints
            let key = context.checkpointKey
            return { source in
                Observable.deferred {
                    let restored = checkpoints?.takeRestoredState(key)?.intValue ?? 0
                    // Every failed attempt passes its error through here before retry sees it.
                    let failures = StateBox(restored)
                    checkpoints?.register(key) { .int(failures.value) }
                    let counted = source.do(onError: { _ in failures.value += 1 })
                    return retrying(max(1, attempts - restored), backoff, parameters, context)(counted)
                }
            }
        })

    /// `retry` with `attempts` in all, each after a backoff if one is given.
    private static func retrying(
        _ attempts: Int, _ initial: RxTimeInterval?, _ parameters: ParameterValues, _ context: ComponentContext
    ) -> PipelineOperator {
        guard let initial else { return { $0.retry(attempts) } }
        let environment = context.environment
        let jitter = parameters[Key.jitter]
        let maximum = parameters[Key.maxBackoff]
        return { source in
            let backoff = ExponentialBackoff(initial: initial, maximum: maximum, jitter: 0)
            return source.retry(
                attempts,
                delay: { failure, _ in
                    let full = backoff.delay(afterFailure: failure)
                    let random = Double(environment.random.next() >> 11) / Double(1 << 53)
                    return .nanoseconds(Int64(Double(full.totalNanoseconds) * (1 - jitter * random)))
                }, scheduler: context.scheduler)
        }
    }
}
