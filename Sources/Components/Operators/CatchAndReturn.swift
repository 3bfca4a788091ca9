import Pipeline
import Reactive

extension BuiltinComponents {
    /// `catchAndReturn: VALUE` — on error, emit a value and complete.
    public static let catchAndReturn = ComponentSpec(
        name: "catchAndReturn",
        summary: "On an error, emits a value and completes instead of failing.",
        parameters: [ParameterSpec("value", .value, required: true, doc: "The value to emit.", example: "[]")],
        primary: "value",
        example: "- catchAndReturn: []",
        factory: .operator { parameters, _ in
            let value = parameters.value("value") ?? .null
            return { $0.catchAndReturn(value) }
        })
}
