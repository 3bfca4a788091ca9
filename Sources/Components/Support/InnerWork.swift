@_spi(Host) import Pipeline
import Reactive

/// What `flatMap`, `flatMapLatest` and `concatMap` share: running an inner source per element,
/// reporting on the `executing` side stream whether any inner runs, and, under `onError: skip`,
/// turning an inner's failure into an element of the `errors` side stream.
final class InnerWork {
    private let source: PipelineSource
    private let context: ComponentContext
    private let skipErrors: Bool
    private var active = 0

    init(parameters: ParameterValues, context: ComponentContext) throws {
        self.source = try context.build(parameters[Self.source])
        self.context = context
        self.skipErrors = parameters[Self.onError] == .skip
    }

    /// The inner observable for `element`, instrumented. It counts as running from the moment the
    /// operator asks for it, so when flatMapLatest switches (new inner made, old one released,
    /// new one subscribed) `executing` does not flicker to false.
    func inner(for element: Value) -> Observable<Value> {
        let context = self.context
        let skipErrors = self.skipErrors
        changeActive(by: 1)
        return source.make(element)
            .do(onDispose: { [weak self] in self?.changeActive(by: -1) })
            .catch { error -> Observable<Value> in
                let report = Self.describe(error, context: context, element: element)
                if skipErrors {
                    context.sideStreams["errors"]?.onNext(report)
                    return .empty()
                }
                context.sideStreams["errors"]?.onNext(report)
                return .error(error)
            }
    }

    private func changeActive(by delta: Int) {
        let wasActive = active > 0
        active += delta
        if wasActive != (active > 0) { context.sideStreams["executing"]?.onNext(.bool(active > 0)) }
    }

    /// An error as an element of the `errors` side stream (with `kind` when the operator names its errors).
    static func describe(_ error: any Error, context: ComponentContext, element: Value, kind: String? = nil) -> Value {
        var report: JSONObject = JSONObject()
        if let kind { report["kind"] = .string(kind) }
        report["message"] = .string((error as? PipelineRuntimeError)?.message ?? "\(error)")
        report["operator"] = .string(context.componentName)
        report["location"] = .string(context.location.description)
        report["element"] = element
        return .object(report)
    }

    /// The inner source.
    static let source = Parameter<ParameterValues.InnerSource>(
        "source", doc: "The inner source run for each element; its templates see the element as '.'.",
        example: "{ events: { timeline: \"{{ .events }}\" } }")
    /// What an inner's error does.
    static let onError = Parameter<ErrorPolicy>(
        "onError", default: .fail,
        doc:
            "fail: an inner error fails the pipeline. skip: it becomes an element of the 'errors' side stream and the operator goes on."
    )

    /// The parameters every inner-work operator takes besides its own.
    static let parameters: [any ParameterDeclaration] = [source, onError]

    /// The side streams they offer.
    static let sideStreams = ["executing", "errors"]
}

/// What an error met while handling one element does: fail the pipeline, or skip that element.
enum ErrorPolicy: String, ParameterChoice {
    case fail, skip
}
