import Pipeline
import Reactive

extension BuiltinComponents {
    /// `catch: {SOURCE}` — on error, continue with a fallback source.
    public static let catchError = ComponentSpec(
        name: "catch",
        summary: "On an error, continues with a fallback source instead of failing.",
        docs:
            "The fallback's templates see the error as '.' ({message: ...}). Errors of the fallback are not caught again.",
        parameters: [
            ParameterSpec(
                "source", .source, required: true, doc: "The fallback source.",
                example: "{ events: [{ at: 0ms, next: [] }] }")
        ],
        primary: "source",
        example: "- catch: { events: [{ at: 0ms, next: { error: true } }] }",
        factory: .operator { parameters, context in
            let fallback = try context.build(parameters.source("source")!)
            return { source in
                source.catch { error in
                    let message = (error as? PipelineRuntimeError)?.message ?? "\(error)"
                    return fallback.make(["message": .string(message)])
                }
            }
        })
}
