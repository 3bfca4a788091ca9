@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@_spi(Host) @_spi(Components) @testable import Pipeline

/// The order of a checkpoint, on which a durable source's exactness rests: sinks hand over what
/// they wrote, the state is read, the messages it holds are told, the sources' positions are read
/// last, the snapshot is committed, the positions learn it, and only then are the messages
/// settled. And a state nobody has taken back yet stays in every snapshot.
final class CheckpointsTests: LeakCheckingTestCase {
    /// An origin that records what it was told, in a log shared with the rest of the test.
    private final class RecordingOrigin: Origin {
        let log: Log
        init(_ log: Log) { self.log = log }
        override func checkpointing() { log.lines.append("origin: checkpointing") }
        override func checkpointed() { log.lines.append("origin: checkpointed") }
    }

    private final class Log {
        var lines: [String] = []
    }

    private func checkpoints(restored: [String: Value] = [:], log: Log) -> Checkpoints {
        Checkpoints(
            restored: restored, interval: .seconds(1), scheduler: VirtualTimeScheduler(resolution: .milliseconds(1)),
            commit: { snapshot in log.lines.append("commit \(JSONSerializer.string(snapshot))") })
    }

    func testPositionsAreReadAfterTheStateAndTheKeptMessagesAndLearnOfTheCommitBeforeTheMessagesAreSettled() {
        let log = Log()
        let checkpoints = checkpoints(log: log)
        checkpoints.beforeEachCheckpoint { log.lines.append("sinks hand over") }
        checkpoints.registerPosition(
            "source",
            read: {
                log.lines.append("position read")
                return .int(7)
            },
            committed: { log.lines.append("position committed") })
        checkpoints.register("operator") {
            log.lines.append("state read")
            return .int(1)
        }
        checkpoints.settleAtNextCommit([RecordingOrigin(log)])
        checkpoints.checkpoint()
        XCTAssertEqual(
            log.lines,
            [
                "sinks hand over", "state read", "origin: checkpointing", "position read",
                #"commit {"operator":1,"source":7}"#, "position committed", "origin: checkpointed",
            ])
        XCTAssertEqual(checkpoints.committed, 1)
    }

    func testAStateNotTakenBackYetIsKeptInEverySnapshotUntilItsComponentTakesIt() {
        let log = Log()
        let checkpoints = checkpoints(restored: ["late": .int(3), "early": .int(1)], log: log)
        XCTAssertEqual(checkpoints.takeRestoredState("early"), .int(1))
        checkpoints.register("early") { .int(2) }
        checkpoints.checkpoint()
        XCTAssertEqual(log.lines.last, #"commit {"early":2,"late":3}"#)
        XCTAssertEqual(checkpoints.takeRestoredState("late"), .int(3))
        checkpoints.register("late") { .int(4) }
        checkpoints.checkpoint()
        XCTAssertEqual(log.lines.last, #"commit {"early":2,"late":4}"#)
    }

    func testNoCheckpointIsTakenOnceTheRunsLastOneEnded() {
        let log = Log()
        let checkpoints = checkpoints(log: log)
        checkpoints.register("operator") { .int(1) }
        checkpoints.checkpoint()
        checkpoints.end()
        // A checkpoint asked for from an enqueued block after the end would commit an empty one.
        checkpoints.checkpoint()
        XCTAssertEqual(log.lines, [#"commit {"operator":1}"#])
        XCTAssertEqual(checkpoints.committed, 1)
    }

    func testAParticipantSeesTheWholeSnapshotLastAndWhatItTakesOutIsNotCommitted() {
        let log = Log()
        let checkpoints = checkpoints(log: log)
        checkpoints.register("kept") { .int(1) }
        checkpoints.register("moved [p0] ops#0 scan") { .int(2) }
        checkpoints.registerPosition("source", read: { .int(7) }, committed: {})
        checkpoints.beforeCommit { snapshot in
            log.lines.append("participant saw \(snapshot.keys.sorted())")
            snapshot["moved [p0] ops#0 scan"] = nil
        }
        checkpoints.checkpoint()
        XCTAssertEqual(
            log.lines,
            [
                #"participant saw ["kept", "moved [p0] ops#0 scan", "source"]"#,
                #"commit {"kept":1,"source":7}"#,
            ])
    }

    func testAReaderOfSnapshotsSeesEachWholeBeforeAParticipantTakesPartOut() {
        let log = Log()
        let checkpoints = checkpoints(log: log)
        checkpoints.register("moved [p0] ops#0 scan") { .int(2) }
        checkpoints.beforeCommit { snapshot in snapshot["moved [p0] ops#0 scan"] = nil }
        checkpoints.afterReading { snapshot in log.lines.append("reader saw \(snapshot.keys.sorted())") }
        checkpoints.checkpoint()
        checkpoints.checkpoint()
        XCTAssertEqual(
            log.lines,
            [
                #"reader saw ["moved [p0] ops#0 scan"]"#, "commit {}",
                #"reader saw ["moved [p0] ops#0 scan"]"#, "commit {}",
            ])
    }

    func testAFailingParticipantFailsTheCheckpoint() {
        let log = Log()
        let checkpoints = checkpoints(log: log)
        struct Refused: Error {}
        checkpoints.beforeCommit { _ in throw Refused() }
        checkpoints.checkpoint()
        XCTAssertTrue(checkpoints.failure is Refused)
        XCTAssertEqual(log.lines, [])
    }

    func testAChainBuiltAgainTakesTheStateGivenToRestoreAndForgottenKeysLeaveTheSnapshot() {
        let log = Log()
        let checkpoints = checkpoints(restored: ["p [p1] ops#0 scan": .int(5)], log: log)
        checkpoints.register("p [p0] ops#0 scan") { .int(1) }
        checkpoints.register("p [p0] ops#1 distinct") { .int(2) }
        checkpoints.register("p [p10] ops#0 scan") { .int(3) }
        // Partition 0 is let go of, partition 1's restored state is dropped unread.
        checkpoints.forget(keysStartingWith: "p [p0] ")
        checkpoints.forget(keysStartingWith: "p [p1] ")
        checkpoints.checkpoint()
        XCTAssertEqual(log.lines.last, #"commit {"p [p10] ops#0 scan":3}"#)
        // Taken over: its chain, built again, finds what it is given.
        checkpoints.restore(["p [p0] ops#0 scan": .int(9)])
        XCTAssertEqual(checkpoints.takeRestoredState("p [p0] ops#0 scan"), .int(9))
        XCTAssertNil(checkpoints.takeRestoredState("p [p1] ops#0 scan"))
    }

    /// On a virtual clock, a due checkpoint waits while two actions are due at one tick (a
    /// resumed run, scheduling both again, might run them in the other order), for at most one
    /// more interval; a stopped run's last checkpoint is taken only if it resumes exactly.
    func testOnAVirtualClockACheckpointWaitsForAMomentWithNoTwoActionsDueTogether() {
        let log = Log()
        let clock = VirtualTimeScheduler(resolution: .milliseconds(1))
        let checkpoints = Checkpoints(
            restored: [:], interval: .seconds(1), scheduler: clock,
            commit: { _ in log.lines.append("commit at \(clock.clock)") })
        let timer = checkpoints.startTimer()
        // Two actions due together at 1,500 ms, then (from 1,500 ms) two at every 200 ms.
        var periodic: [any Disposable] = []
        clock.scheduleAt(1500) {}
        clock.scheduleAt(1500) {
            periodic.append(clock.schedulePeriodic(startAfter: .milliseconds(200), period: .milliseconds(200)) {})
            periodic.append(clock.schedulePeriodic(startAfter: .milliseconds(200), period: .milliseconds(200)) {})
        }
        clock.advance(to: 1000)
        XCTAssertEqual(log.lines, [], "at 1,000 ms both actions at 1,500 ms are pending")
        XCTAssertFalse(checkpoints.resumesExactlyNow)
        clock.advance(to: 1500)
        XCTAssertEqual(log.lines, [])
        clock.advance(to: 2000)
        XCTAssertEqual(log.lines, ["commit at 2000"], "one interval late: the periodic pair is always due together")
        timer.dispose()
        checkpoints.runStopping()
        XCTAssertFalse(checkpoints.resumesExactlyAtStop)
        for timer in periodic { timer.dispose() }
        XCTAssertTrue(
            Checkpoints(restored: [:], interval: .seconds(1), scheduler: SerialRunLoopScheduler(), commit: { _ in })
                .resumesExactlyNow, "a real clock's order at one instant is not repeatable anyway")
    }
}
