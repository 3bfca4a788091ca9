import Pipeline
import Reactive

private enum Key {
    static let fallback = Parameter<ParameterValues.InnerSource>(
        "source", doc: "The fallback source.", example: "{ events: [{ at: 0ms, next: [] }] }")
}

extension BuiltinComponents {
    /// `catch: {SOURCE}` — on error, continue with a fallback source.
    public static let catchError = ComponentSpec(
        name: "catch",
        summary: "On an error, continues with a fallback source instead of failing.",
        docs:
            "The fallback's templates see the error as '.' ({message: ...}). Errors of the fallback are not caught again.",
        parameters: [Key.fallback],
        primary: Key.fallback,
        example: "- catch: { events: [{ at: 0ms, next: { error: true } }] }",
        checkpointing: .restartsWork(
            "the stream it reads when the run resumes: one that had switched to its fallback after an error reads its "
                + "input again"),
        factory: .operator { parameters, context in
            let fallback = try context.build(parameters[Key.fallback])
            return { source in
                source.catch { error in
                    let message = (error as? PipelineRuntimeError)?.message ?? "\(error)"
                    return fallback.make(["message": .string(message)])
                }
            }
        })
}
