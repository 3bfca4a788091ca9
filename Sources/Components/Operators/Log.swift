import Pipeline
import Reactive

extension BuiltinComponents {
    /// `log` (optionally `LABEL`) — prints each event with its time to standard error.
    public static let log = ComponentSpec(
        name: "log",
        summary: "Prints each event, with the pipeline time, to standard error, and passes it on unchanged.",
        parameters: [
            ParameterSpec("label", .string, default: "log", doc: "A prefix telling log lines apart.", example: "typed")
        ],
        primary: "label",
        example: "- log: typed",
        factory: .operator { parameters, context in
            let label = parameters.string("label") ?? "log"
            return { source in
                source.do(
                    onNext: { context.log("[\(label)] \(DurationSyntax.format(context.scheduler.now)) next \($0)") },
                    onError: { context.log("[\(label)] \(DurationSyntax.format(context.scheduler.now)) error \($0)") },
                    onCompleted: { context.log("[\(label)] \(DurationSyntax.format(context.scheduler.now)) completed") }
                )
            }
        })
}
