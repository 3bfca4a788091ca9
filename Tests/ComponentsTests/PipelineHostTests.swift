import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import PipelineHost
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// `PipelineHost` on a virtual clock: a run driven to its end, stopped at a limit or when
/// interrupted, and its checkpoints taken between events, a failed one stopping it; on the real
/// clock: a limit, and a stop asked for from another thread that drains the sources.
final class PipelineHostTests: LeakCheckingTestCase {
    private func pipeline(_ text: String) throws -> ValidatedPipeline {
        let loader = PipelineLoader(registry: ComponentRegistry(registering: BuiltinComponents.all), environment: [:])
        let loaded = loader.load(text: text, path: "p.yaml")
        return try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
    }

    private static let ticking = """
        source: { interval: 10ms }
        ops:
          - scan: { seed: 0, accumulator: "{{ acc + 1 }}" }
        sink: { file: { path: /dev/null } }
        """

    func testARunIsDrivenToItsEndAndItsOutcomeKept() throws {
        let clock = VirtualTimeScheduler(resolution: .milliseconds(1))
        var logged: [String] = []
        var setup = PipelineHost.Setup()
        setup.log = { logged.append($0.message) }
        let host = try PipelineHost(
            pipeline(
                """
                source: { events: [{ at: 10ms, next: 1 }, { at: 20ms, next: 2 }, { at: 30ms, next: 3 }, { at: 40ms, complete: true }] }
                ops:
                  - log: {}
                sink: { file: { path: /dev/null } }
                """), on: clock, setup)
        var told: PipelineRun.Outcome?
        host.start { told = $0 }
        let steps = host.runToEnd(on: clock)
        guard case .completed? = host.outcome, case .completed? = told else {
            return XCTFail("completed, got \(String(describing: host.outcome))")
        }
        XCTAssertGreaterThan(steps, 0)
        XCTAssertEqual(logged, ["[log] 10ms next 1", "[log] 20ms next 2", "[log] 30ms next 3", "[log] 40ms completed"])
    }

    func testALimitOnTheClockStopsARunWithoutEnd() throws {
        let clock = VirtualTimeScheduler(resolution: .milliseconds(1))
        let host = try PipelineHost(pipeline(Self.ticking), on: clock)
        host.start()
        host.runToEnd(on: clock, until: .milliseconds(95))
        guard case .cancelled? = host.outcome else {
            return XCTFail("cancelled, got \(String(describing: host.outcome))")
        }
        XCTAssertEqual(clock.clock, 95)
    }

    func testAnInterruptionOrTheStepLimitStopsTheRun() throws {
        let clock = VirtualTimeScheduler(resolution: .milliseconds(1))
        let host = try PipelineHost(pipeline(Self.ticking), on: clock)
        host.start()
        XCTAssertEqual(host.runToEnd(on: clock, maxSteps: 7), 7)
        XCTAssertNotNil(host.outcome, "stopped after seven events")

        let other = VirtualTimeScheduler(resolution: .milliseconds(1))
        let interrupted = try PipelineHost(pipeline(Self.ticking), on: other)
        interrupted.start()
        interrupted.runToEnd(on: other, interrupted: { other.clock >= 50 })
        XCTAssertEqual(other.clock, 50)
        XCTAssertNotNil(interrupted.outcome)
    }

    func testCheckpointsAreTakenBetweenEventsAndAFailedOneStopsTheRun() throws {
        let clock = VirtualTimeScheduler(resolution: .milliseconds(1))
        var commits: [Value] = []
        var setup = PipelineHost.Setup()
        setup.checkpoints = { scheduler in
            Checkpoints(restored: [:], interval: .milliseconds(100), scheduler: scheduler) { snapshot in
                if commits.count == 2 { throw CheckpointFull() }
                commits.append(snapshot)
            }
        }
        let host = try PipelineHost(pipeline(Self.ticking), on: clock, setup)
        host.start()
        host.runToEnd(on: clock, until: .seconds(60))
        XCTAssertEqual(commits.count, 2)
        XCTAssertNotNil(host.checkpoints?.failure)
        guard case .cancelled? = host.outcome else {
            return XCTFail("stopped, got \(String(describing: host.outcome))")
        }
        XCTAssertLessThan(clock.clock, 60_000, "the failed checkpoint stopped the run before its limit")
    }

    func testTheRecordingSinkKeepsEachEventWithItsTimeAndCountsCloses() throws {
        let clock = VirtualTimeScheduler(resolution: .milliseconds(1))
        let sink = RecordingSink(time: { clock.clock })
        clock.scheduleAt(5) { sink.receive(.next(.int(1))) }
        clock.scheduleAt(9) { sink.receive(.completed) }
        clock.advance(to: 10)
        sink.close()
        XCTAssertEqual(sink.events.map(\.time), [5, 9])
        guard case .next(.int(1)) = sink.events[0].event, case .completed = sink.events[1].event else {
            return XCTFail("\(sink.events)")
        }
        XCTAssertEqual(sink.closed, 1)
    }

    private struct CheckpointFull: Error {}

    func testOnTheRealClockALimitStopsARunWithoutEnd() throws {
        let clock = SerialRunLoopScheduler()
        let host = try PipelineHost(pipeline(Self.ticking), on: clock)
        host.runOnRealClock(clock, until: .milliseconds(50))
        guard case .cancelled? = host.outcome else {
            return XCTFail("cancelled, got \(String(describing: host.outcome))")
        }
        XCTAssertNil(host.stopping)
    }

    /// A stop asked for from another thread (a signal's) drains the sources: their streams
    /// complete as if they had ended, so the run completes, and `stopping` says so.
    func testOnTheRealClockAStopFromAnotherThreadDrainsTheSources() throws {
        let clock = SerialRunLoopScheduler()
        let host = try PipelineHost(pipeline(Self.ticking), on: clock)
        let bound = SchedulerBound(host)
        let asker = Thread {
            Thread.sleep(forTimeInterval: 0.05)
            bound.value.requestStop(on: clock, keepsOnStop: true, drainTimeout: .seconds(5))
        }
        asker.start()
        host.runOnRealClock(clock, until: .seconds(30))
        guard case .completed? = host.outcome else {
            return XCTFail("completed, got \(String(describing: host.outcome))")
        }
        XCTAssertEqual(host.stopping, .drained)
    }

    /// A stop asked for before the run started (a signal in the process's first milliseconds,
    /// before `runOnRealClock`) is not lost: the run is never started and `runOnRealClock`
    /// returns at once. (It was: the stop found nothing to stop, the run started after it and
    /// went on until the signal thread gave up, 35 s later.)
    func testOnTheRealClockAStopAskedForBeforeTheRunStartsMeansItNeverStarts() throws {
        let clock = SerialRunLoopScheduler()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("before-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: output) }
        let host = try PipelineHost(
            pipeline(Self.ticking.replacingOccurrences(of: "/dev/null", with: output.path)), on: clock)
        host.requestStop(on: clock, keepsOnStop: false, drainTimeout: .seconds(5))
        let started = DispatchTime.now().uptimeNanoseconds
        host.runOnRealClock(clock, until: .seconds(30))
        XCTAssertLessThan(DispatchTime.now().uptimeNanoseconds - started, 5_000_000_000)
        XCTAssertNil(host.outcome)
        XCTAssertNil(host.run)
        XCTAssertEqual(host.stopping, .beforeStart)
        XCTAssertEqual((try? Data(contentsOf: output))?.count ?? 0, 0, "nothing was read, so nothing written")
    }

    /// A resumed run stopped before it started still checkpoints at its stop (as `rivulet run
    /// --state` does after a signal): what it resumed from must be committed again whole, not an
    /// empty snapshot that would make the next run start over.
    func testARunStoppedBeforeItStartedCommitsWhatItResumedFromUnchanged() throws {
        final class Store { var last: Value? }
        let store = Store()
        func run(restoring restored: [String: Value], stopFirst: Bool) throws {
            let clock = SerialRunLoopScheduler()
            var setup = PipelineHost.Setup()
            setup.checkpoints = { scheduler in
                Checkpoints(restored: restored, interval: .seconds(60), scheduler: scheduler) { store.last = $0 }
            }
            let host = try PipelineHost(pipeline(Self.ticking), on: clock, setup)
            if stopFirst { host.requestStop(on: clock, keepsOnStop: true, drainTimeout: .seconds(5)) }
            host.runOnRealClock(clock, until: .milliseconds(60))
            host.checkpoints?.checkpoint()
        }
        try run(restoring: [:], stopFirst: false)
        let first = try XCTUnwrap(store.last?.objectValue)
        XCTAssertFalse(first.isEmpty)
        try run(restoring: Dictionary(uniqueKeysWithValues: first.map { ($0.0, $0.1) }), stopFirst: true)
        XCTAssertEqual(store.last?.objectValue, first, "nothing of the checkpoint it resumed from is lost")
    }
}
