import Pipeline
import Reactive

extension BuiltinComponents {
    /// `merge: [STREAM, ...]` — this stream's elements and the others', as they come.
    public static let merge = ComponentSpec(
        name: "merge",
        summary: "Merges other streams into this one: every element of any of them, as it comes.",
        docs: "Completes when all have completed; an error from any fails at once.",
        parameters: [
            ParameterSpec(
                "streams", .list(.stream), required: true, doc: "The other streams.", example: "[next, previous]")
        ],
        primary: "streams",
        example: "- merge: [previousTaps]",
        factory: .operator { parameters, context in
            let names = streamNames(parameters.list("streams"))
            return { source in Observable.merge([source] + names.map(context.stream)) }
        })

    static func streamNames(_ entries: [ParameterValues.Entry]?) -> [String] {
        (entries ?? []).compactMap {
            if case .string(let name) = $0 { return name }
            return nil
        }
    }
}
