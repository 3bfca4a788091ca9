@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let dueTime = Parameter<RxTimeInterval>("dueTime", doc: "The longest wait for an element.", example: "5s")
    static let fallback = Parameter<ParameterValues.InnerSource?>(
        "fallback", doc: "A source to continue with instead of failing.", example: "{ events: [] }")
}

extension BuiltinComponents {
    /// `timeout: DURATION` — fails (or switches to a fallback) when elements stop coming.
    public static let timeout = ComponentSpec(
        name: "timeout",
        summary: "Fails, or switches to a fallback source, when no element arrives within a duration.",
        docs: "The clock starts at subscription and restarts at each element." + ClockDocs.fromSubscription,
        parameters: [Key.dueTime, Key.fallback],
        primary: Key.dueTime,
        example: "- timeout: 5s",
        checkpointing: .restartsWork(
            "its clock when the run resumes (it waits the whole duration again); a stream that had switched to its "
                + "fallback reads its input again"),
        factory: .operator { parameters, context in
            let dueTime = parameters[Key.dueTime]
            let fallback = try parameters[Key.fallback].map { try context.build($0) }
            return { source in
                if let fallback {
                    return source.timeout(dueTime, other: fallback.make(.null), scheduler: context.scheduler)
                }
                return source.timeout(dueTime, scheduler: context.scheduler).catch { error -> Observable<Value> in
                    if case RxError.timeout = error {
                        throw context.error("no element within \(DurationSyntax.format(dueTime))")
                    }
                    throw error
                }
            }
        })
}
