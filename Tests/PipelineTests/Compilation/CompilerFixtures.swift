@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive

/// A registry of components of the tests' own (no I/O): `numbers` emits 1...count, `times`
/// multiplies each element (`sharedTimes` the same on the pipeline's thread only, `splitTimes`
/// with a side stream), `held` is an operator that is not element-wise, `collect` records what
/// reaches it. Subscriptions to `numbers` are counted, to see multicasting.
final class CompilerFixtures {
    private enum Key {
        static let count = Parameter<Int>("count", default: 3, doc: "How many numbers.").atLeast(0)
        static let factor = Parameter<Int>("by", doc: "The factor.")
        static let label = Parameter<String>("label", default: "", doc: "Which collector.")
    }

    var subscriptions = 0
    var collectors: [String: RecordingSink] = [:]

    func registry() -> ComponentRegistry {
        let registry = ComponentRegistry()
        try! registry.register(
            ComponentSpec(
                name: "numbers", summary: "1...count", parameters: [Key.count], primary: Key.count,
                example: "source: { numbers: 3 }",
                factory: .source { [unowned self] values, _ in
                    PipelineSource { _ in
                        self.subscriptions += 1
                        return Observable.from((0..<values[Key.count]).map { Value.int($0 + 1) })
                    }
                }))
        let times = ComponentSpec(
            name: "times", summary: "multiplies", parameters: [Key.factor], primary: Key.factor,
            example: "- times: 2",
            factory: .elementwise { values, _ in
                let factor = values[Key.factor]
                return { { element in .int((element.intValue ?? 0) * factor) } }
            })
        try! registry.register(times)
        // The same, declared to need the pipeline's thread (as one using a shared service would).
        var sharedTimes = times
        sharedTimes.name = "sharedTimes"
        sharedTimes.threading = .pipelineThread
        try! registry.register(sharedTimes)
        // The same, with a side stream `odd` (what a reader of it would get is not sent here).
        var splitTimes = times
        splitTimes.name = "splitTimes"
        splitTimes.sideStreams = ["odd"]
        try! registry.register(splitTimes)
        // An operator that is not element-wise: it passes what it gets on as it is.
        try! registry.register(
            ComponentSpec(name: "held", summary: "passes on", example: "- held", factory: .operator { _, _ in { $0 } }))
        try! registry.register(
            ComponentSpec(
                name: "collect", summary: "keeps", parameters: [Key.label], primary: Key.label,
                example: "sink: collect",
                factory: .sink { [unowned self] values, _ in
                    let collector = RecordingSink(time: { 0 })
                    collectors[values[Key.label]] = collector
                    return collector
                }))
        return registry
    }

    func load(_ text: String) -> PipelineLoader.Loaded {
        PipelineLoader(registry: registry(), environment: [:]).load(text: text, path: "p.yaml")
    }
}
