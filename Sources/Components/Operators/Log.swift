@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let label = Parameter<String>(
        "label", default: "log", doc: "A prefix telling log lines apart.", example: "typed")
}

extension BuiltinComponents {
    /// `log` (optionally `LABEL`) — prints each event with its time to standard error.
    public static let log = ComponentSpec(
        name: "log",
        summary: "Prints each event, with the pipeline time, to standard error, and passes it on unchanged.",
        parameters: [Key.label],
        primary: Key.label,
        example: "- log: typed",
        checkpointing: .stateless,
        factory: .operator { parameters, context in
            let label = parameters[Key.label]
            return { source in
                source.do(
                    onNext: { context.log("[\(label)] \(DurationSyntax.format(context.scheduler.now)) next \($0)") },
                    onError: { context.log("[\(label)] \(DurationSyntax.format(context.scheduler.now)) error \($0)") },
                    onCompleted: { context.log("[\(label)] \(DurationSyntax.format(context.scheduler.now)) completed") }
                )
            }
        }
    ).declaring { traits in
        traits.partitioning = { _ in .anyKey }
    }
}
