/// How a component takes part in checkpoints (`rivulet run --state`): declared beside its spec,
/// shown in the component reference, and checked before a checkpointed run starts.
public indirect enum Checkpointing {
    /// It holds nothing between two events (`map`, `filter`): it restarts as it was.
    case stateless
    /// It keeps its state in every checkpoint and takes it back on restart (`scan`'s accumulator,
    /// a file's position); the text says what is kept.
    case keepsState(String)
    /// It restarts its work from the start of what it was doing (an HTTP request, a page), so what
    /// it produced since the last checkpoint may come again: at-least-once.
    case restartsWork(String)
    /// It cannot be checkpointed yet; the text says why. A run with `--state` refuses it.
    case unsupported(String)
    /// It depends on the component's values (a `file` sink writing JSON cannot; JSON Lines can);
    /// the text says how, for the component reference.
    case depending(String, on: (ParameterValues) -> Checkpointing)

    /// What it is for the values `values`.
    @_spi(Components) public func resolved(for values: ParameterValues) -> Checkpointing {
        if case .depending(_, let choose) = self { return choose(values).resolved(for: values) }
        return self
    }

    /// One line for the component reference.
    @_spi(Components) public var summary: String {
        switch self {
        case .stateless: return "stateless: nothing to keep"
        case .keepsState(let what): return "keeps \(what)"
        case .restartsWork(let what): return "restarts \(what) (at-least-once)"
        case .unsupported(let why): return "not supported: \(why)"
        case .depending(let how, _): return how
        }
    }
}

extension Checkpointing {
    /// For a component that runs the inner chain under `ops` (`groupBy`, `partitionBy`): it keeps
    /// `what`, each of the chain's operators keeping its own state, unless one of them cannot be
    /// checkpointed.
    @_spi(Components) public static func ofInnerChain(
        _ ops: Parameter<ParameterValues.OperatorChain>, keeping what: String, described description: String
    ) -> Checkpointing {
        .depending(
            description,
            on: { values in
                for component in values[ops].operators {
                    if case .unsupported(let why) = component.spec.checkpointing.resolved(for: component.parameters) {
                        return .unsupported(
                            "its ops use '\(component.spec.name)', which cannot be checkpointed: \(why)")
                    }
                }
                return .keepsState(what)
            })
    }
}
