@_spi(Components) import Reactive

#if canImport(Glibc)
    import Glibc
#endif

/// W1: one million integers through filter → map → distinctUntilChanged(key) → scan, on the
/// runtime and as a hand-written loop, checked to agree.
enum W1 {
    static let count = 1_000_000

    struct Outcome: Equatable {
        var emitted = 0
        var lastSum = 0
    }

    static func runtime() -> Outcome {
        let state = ChainState()
        Observable<Int>.range(start: 0, count: opaque(count))
            .filter { $0 % 3 != 0 }
            .map { $0 * 2 }
            .distinctUntilChanged { $0 / 4 }
            .scan(0, accumulator: +)
            .subscribe(onNext: { sum in
                state.outcome.emitted += 1
                state.outcome.lastSum = sum
            })
        return state.outcome
    }

    /// The runtime with the same stages hidden from the optimizer as the closure chain's are, so
    /// the two differ only in what the runtime adds per element (sinks, events, disposal checks).
    static func runtimeOpaqueStages() -> Outcome {
        let state = ChainState()
        let keep: (Int) -> Bool = opaque { $0 % 3 != 0 }
        let double: (Int) -> Int = opaque { $0 * 2 }
        let key: (Int) -> Int = opaque { $0 / 4 }
        let add: (Int, Int) -> Int = opaque { $0 + $1 }
        let emit: (Int) -> Void = opaque { total in
            state.outcome.emitted += 1
            state.outcome.lastSum = total
        }
        Observable<Int>.range(start: 0, count: opaque(count))
            .filter(keep)
            .map(double)
            .distinctUntilChanged(key)
            .scan(0, accumulator: add)
            .subscribe(onNext: emit)
        return state.outcome
    }

    static func loop() -> Outcome {
        var outcome = Outcome()
        var lastKey: Int?
        var sum = 0
        for i in 0..<opaque(count) {
            if i % 3 == 0 { continue }
            let doubled = i * 2
            let key = doubled / 4
            if key == lastKey { continue }
            lastKey = key
            sum += doubled
            outcome.emitted += 1
            outcome.lastSum = sum
        }
        return outcome
    }

    /// The state the closure chain keeps, unchecked for exclusivity as the runtime's sinks are.
    final class ChainState {
        @exclusivity(unchecked) var outcome = Outcome()
        @exclusivity(unchecked) var lastKey: Int?
        @exclusivity(unchecked) var sum = 0
    }

    /// The same work as a chain of plain Swift closures, each calling the next (hidden from the
    /// optimizer, as an operator chain is): what one indirect call per stage costs.
    static func closures() -> Outcome {
        let state = ChainState()
        let emit: (Int) -> Void = opaque { total in
            state.outcome.emitted += 1
            state.outcome.lastSum = total
        }
        let scan: (Int) -> Void = opaque { value in
            state.sum += value
            emit(state.sum)
        }
        let distinct: (Int) -> Void = opaque { value in
            let key = value / 4
            if key == state.lastKey { return }
            state.lastKey = key
            scan(value)
        }
        let map: (Int) -> Void = opaque { value in distinct(value * 2) }
        let filter: (Int) -> Void = opaque { value in if value % 3 != 0 { map(value) } }
        for i in 0..<opaque(count) { filter(i) }
        return state.outcome
    }

    static func run() {
        // Warm up both, then take the best of several rounds of each.
        let expected = loop()
        let actual = runtime()
        guard expected == actual, closures() == expected, runtimeOpaqueStages() == expected else {
            print("w1 MISMATCH runtime=\(actual) loop=\(expected)")
            exit(1)
        }
        var runtimeBest = Double.infinity
        var loopBest = Double.infinity
        var closuresBest = Double.infinity
        var opaqueBest = Double.infinity
        for _ in 0..<7 {
            opaqueBest = min(opaqueBest, Clock.seconds { _ = runtimeOpaqueStages() })
            runtimeBest = min(runtimeBest, Clock.seconds { _ = runtime() })
            loopBest = min(loopBest, Clock.seconds { _ = loop() })
            closuresBest = min(closuresBest, Clock.seconds { _ = closures() })
        }
        let eventsPerSecond = Double(count) / runtimeBest
        print("w1 rounds=7 elements=\(count) emitted=\(actual.emitted) sum=\(actual.lastSum)")
        print("w1 runtime_best_s=\(format(runtimeBest)) loop_best_s=\(format(loopBest))")
        print("w1 closures_best_s=\(format(closuresBest)) closures_events_per_s=\(Int(Double(count) / closuresBest))")
        print(
            "w1 opaque_stages_best_s=\(format(opaqueBest)) opaque_stages_events_per_s=\(Int(Double(count) / opaqueBest)) "
                + "opaque_vs_closures=\(format(closuresBest / opaqueBest))")
        print(
            "w1 events_per_s=\(Int(eventsPerSecond)) vs_loop=\(format(runtimeBest / loopBest)) "
                + "vs_closures=\(format(closuresBest / runtimeBest))")
    }
}

/// Hides a value from the optimizer, so neither side is computed at compile time.
@inline(never)
func opaque<T>(_ value: T) -> T { value }

func format(_ value: Double) -> String {
    let scaled = (value * 10000).rounded() / 10000
    return "\(scaled)"
}

enum Clock {
    static func seconds(_ body: () -> Void) -> Double {
        var start = timespec()
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        body()
        clock_gettime(CLOCK_MONOTONIC, &end)
        return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    }
}
