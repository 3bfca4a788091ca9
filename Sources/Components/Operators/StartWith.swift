@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let values = Parameter<[Value]>("values", doc: "The values.", example: "0")
}

extension BuiltinComponents {
    /// `startWith: VALUE` or a list — emits values before the stream.
    public static let startWith = ComponentSpec(
        name: "startWith",
        summary: "Emits the given values at subscription, before the stream's own elements.",
        docs: "A list gives several values, emitted in order. To start with a list as one value, nest it: [[1, 2]].",
        parameters: [Key.values],
        primary: Key.values,
        example: "- startWith: \"\"",
        checkpointing: .keepsState("whether it emitted its values"),
        factory: .operator { parameters, context in
            let values = parameters[Key.values]
            guard context.checkpoints != nil else { return { $0.startWith(contentsOf: values) } }
            return { source in
                Observable.deferred {
                    let emitted = context.restoredState?.boolValue ?? false
                    context.keepState { true }
                    return emitted ? source : source.startWith(contentsOf: values)
                }
            }
        }
    ).runningOnAnyThread()
}
