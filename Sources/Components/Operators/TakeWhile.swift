import Pipeline
import Reactive

extension BuiltinComponents {
    /// `takeWhile: EXPR` — passes elements while the expression holds.
    public static let takeWhile = ComponentSpec(
        name: "takeWhile",
        summary: "Passes on elements while an expression holds, then completes.",
        docs: "With inclusive: true the first element for which it is false is emitted before completion.",
        parameters: [
            ParameterSpec("expression", .expression, required: true, doc: "The condition.", example: ". < 10"),
            ParameterSpec("inclusive", .bool, default: false, doc: "Emit the element that ends the stream."),
        ],
        primary: "expression",
        example: "- takeWhile: .page <= 5",
        factory: .operator { parameters, context in
            predicateOperator(parameters, context) { $0.take(while: $1, behavior: $2) }
        })

    /// An operator that tests each element with its `expression` parameter (on a scope of its own
    /// for each subscription) and honours `inclusive`: what takeWhile and takeUntil share.
    static func predicateOperator(
        _ parameters: ParameterValues, _ context: ComponentContext,
        _ apply: @escaping (Observable<Value>, @escaping (Value) throws -> Bool, TakeBehavior) -> Observable<Value>
    ) -> PipelineOperator {
        let expression = parameters.expression("expression")!
        let behavior: TakeBehavior = parameters.bool("inclusive") == true ? .inclusive : .exclusive
        return { source in
            Observable.deferred {
                let scope = context.makeScope()
                return apply(source, { try context.evaluate(expression, $0, in: scope).isTruthy }, behavior)
            }
        }
    }
}
