import Reactive

/// One element-wise step: the element it becomes, or nil to drop it. The step owns the element
/// (`consuming`), so a filter hands on the one it keeps and a map lets go of its input without
/// a reference count changing hands in between.
public typealias ElementStep = (consuming Value) throws -> Value?

/// Runs adjacent element-wise operators as one.
@_spi(Host) public enum ElementSteps {
    /// An element-wise operator's maker, as a list holds it. (A closure put in an array itself is
    /// kept in the array's generic form, and every call of a step taken out of it went through
    /// two conversion thunks: 5% of a W2 run's samples on two threads.)
    public struct Maker {
        /// Makes the operator's step (once per subscription).
        public let make: () -> ElementStep
        /// The maker `make`.
        public init(_ make: @escaping () -> ElementStep) { self.make = make }
    }

    /// A step, as a list holds it (see `Maker`).
    public struct Made {
        /// The step.
        public let step: ElementStep
        /// Holds `step`.
        public init(_ step: @escaping ElementStep) { self.step = step }
    }

    /// One operator for the stretch: each subscription makes its steps and composes them, so an
    /// element crosses every step in one sink. A step's error ends the stream at that element, as
    /// it would have ended there alone.
    public static func fused(_ makers: [Maker]) -> PipelineOperator {
        { source in
            Observable { observer, lifetime in
                let step = compose(makers.map { Made($0.make()) })
                source.compactMap { try step($0) }.subscribe(observer, in: lifetime)
            }
        }
    }

    /// The steps as one.
    public static func compose(_ steps: [Made]) -> ElementStep {
        switch steps.count {
        case 1: return steps[0].step
        case 2:
            let (first, second) = (steps[0].step, steps[1].step)
            return { element in
                guard let next = try first(consume element) else { return nil }
                return try second(next)
            }
        case 3:
            let (first, second, third) = (steps[0].step, steps[1].step, steps[2].step)
            return { element in
                guard let next = try first(consume element), let last = try second(next) else { return nil }
                return try third(last)
            }
        default:
            return { element in
                var current = consume element
                for made in steps {
                    guard let next = try made.step(current) else { return nil }
                    current = next
                }
                return current
            }
        }
    }
}
