import Pipeline
import Reactive

extension BuiltinComponents {
    /// `combineLatest: [STREAM, ...]` — the latest element of each, as a list.
    public static let combineLatest = ComponentSpec(
        name: "combineLatest",
        summary: "Combines this stream with others: on every element of any, emits the latest of each as a list.",
        docs: """
            Nothing is emitted until every stream has produced an element. The list holds this stream's \
            latest first, then the others' in the order given. RxSwift's completion rule applies: it completes \
            when all have completed, or when an element arrives that can never be combined.
            """,
        parameters: [
            ParameterSpec("streams", .list(.stream), required: true, doc: "The other streams.", example: "[items]")
        ],
        primary: "streams",
        example: "- combineLatest: [items]",
        factory: .operator { parameters, context in
            let names = streamNames(parameters.list("streams"))
            return { source in Observable.combineLatest([source] + names.map(context.stream)) { Value.array($0) } }
        })
}
