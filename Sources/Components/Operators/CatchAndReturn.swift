import Pipeline
import Reactive

private enum Key {
    static let value = Parameter<Value>("value", doc: "The value to emit.", example: "[]")
}

extension BuiltinComponents {
    /// `catchAndReturn: VALUE` — on error, emit a value and complete.
    public static let catchAndReturn = ComponentSpec(
        name: "catchAndReturn",
        summary: "On an error, emits a value and completes instead of failing.",
        parameters: [Key.value],
        primary: Key.value,
        example: "- catchAndReturn: []",
        checkpointing: .stateless,
        factory: .operator { parameters, _ in
            let value = parameters[Key.value]
            return { $0.catchAndReturn(value) }
        })
}
