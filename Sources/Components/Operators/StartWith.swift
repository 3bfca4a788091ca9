import Pipeline
import Reactive

extension BuiltinComponents {
    /// `startWith: VALUE` or a list — emits values before the stream.
    public static let startWith = ComponentSpec(
        name: "startWith",
        summary: "Emits the given values at subscription, before the stream's own elements.",
        docs: "A list gives several values, emitted in order. To start with a list as one value, nest it: [[1, 2]].",
        parameters: [ParameterSpec("values", .list(.value), required: true, doc: "The values.", example: "0")],
        primary: "values",
        example: "- startWith: \"\"",
        factory: .operator { parameters, _ in
            let values: [Value] = (parameters.list("values") ?? []).map {
                if case .value(let value) = $0 { return value }
                return .null
            }
            return { $0.startWith(contentsOf: values) }
        })
}
