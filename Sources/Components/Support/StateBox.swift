/// A component's state, shared between the closures that update it and the reader a checkpoint
/// calls (both on the pipeline's scheduler).
final class StateBox<State> {
    var value: State

    init(_ value: State) {
        self.value = value
    }
}
