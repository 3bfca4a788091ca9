import Reactive

/// One element-wise step: the element it becomes, or nil to drop it. The step owns the element
/// (`consuming`), so a filter hands on the one it keeps and a map lets go of its input without
/// a reference count changing hands in between.
public typealias ElementStep = (consuming Value) throws -> Value?

/// Runs adjacent element-wise operators as one.
@_spi(Host) public enum ElementSteps {
    /// One operator for the stretch: each subscription makes its steps and composes them, so an
    /// element crosses every step in one sink. A step's error ends the stream at that element, as
    /// it would have ended there alone.
    public static func fused(_ makers: [() -> ElementStep]) -> PipelineOperator {
        { source in
            Observable { observer, lifetime in
                let step = compose(makers.map { $0() })
                source.compactMap { try step($0) }.subscribe(observer, in: lifetime)
            }
        }
    }

    /// The steps as one.
    public static func compose(_ steps: [ElementStep]) -> ElementStep {
        switch steps.count {
        case 1: return steps[0]
        case 2:
            let (first, second) = (steps[0], steps[1])
            return { element in
                guard let next = try first(consume element) else { return nil }
                return try second(next)
            }
        case 3:
            let (first, second, third) = (steps[0], steps[1], steps[2])
            return { element in
                guard let next = try first(consume element), let last = try second(next) else { return nil }
                return try third(last)
            }
        default:
            return { element in
                var current = consume element
                for step in steps {
                    guard let next = try step(current) else { return nil }
                    current = next
                }
                return current
            }
        }
    }
}
