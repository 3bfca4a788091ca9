import CNATS
import RivuletTestSupport
import XCTest

@testable import Components

/// The one way a consumer, a group's buckets and a sink's stream wait out JetStream's passing
/// errors: on a clock the test moves, with no server.
final class JetStreamRetryTests: LeakCheckingTestCase {
    private final class Clock {
        var now: Duration = .zero
        var lines: [String] = []
        var pauses = 0
    }

    private func retry(_ clock: Clock, lostAfter: Duration = .seconds(2), stopAfter: Int = .max) -> JetStreamRetry {
        JetStreamRetry(
            lostAfter: lostAfter, now: { clock.now }, report: { clock.lines.append($0) },
            pause: {
                clock.pauses += 1
                clock.now += .milliseconds(500)
                return clock.pauses >= stopAfter
            })
    }

    private let timeout = NATSError(NATS_TIMEOUT, doing: "making consumer 'c'")

    func testAPassingErrorIsAskedAgainAndTheRecoveryIsSaid() throws {
        let clock = Clock()
        var calls = 0
        let result = try retry(clock).run { () throws -> Int in
            calls += 1
            if calls < 3 { throw timeout }
            return 42
        }
        XCTAssertEqual(result, 42)
        XCTAssertEqual(calls, 3)
        XCTAssertEqual(clock.pauses, 2)
        XCTAssertEqual(clock.lines.count, 2, "the first error once, then the recovery: \(clock.lines)")
        XCTAssertTrue(clock.lines[0].hasPrefix("making consumer 'c': "), clock.lines[0])
        XCTAssertTrue(clock.lines[0].hasSuffix("; trying again for up to lostAfter (2s)"), clock.lines[0])
        XCTAssertEqual(clock.lines[1], "JetStream answers again")
    }

    /// A cluster's leader may answer before the other nodes have joined it: a stream of three
    /// replicas then has "no suitable peers for placement" for a moment, as a forming cluster has
    /// no leader; both are waited out, a timeout too, and nothing else.
    func testAClusterWithoutALeaderOrWithoutItsPeersYetIsWaitedOut() {
        let passing = [
            NATSError(NATS_ERR, code: JSClusterNotAvailErr, doing: "making stream 'S'"),
            NATSError(NATS_ERR, code: JSClusterNoPeersErr, doing: "making stream 'S'"), timeout,
        ]
        XCTAssertEqual(passing.map(\.isPassing), [true, true, true])
        XCTAssertFalse(NATSError(NATS_ERR, code: JSStreamNameExistErr, doing: "making stream 'S'").isPassing)
        XCTAssertFalse(NATSError(NATS_ERR, code: JSStreamReplicasNotSupportedErr, doing: "making stream 'S'").isPassing)
    }

    func testAnAnswerAtOnceSaysNothing() throws {
        let clock = Clock()
        XCTAssertEqual(try retry(clock).run { "ok" }, "ok")
        XCTAssertEqual(clock.lines, [])
        XCTAssertEqual(clock.pauses, 0)
    }

    func testAPassingErrorStillThereAfterLostAfterIsThrown() {
        let clock = Clock()
        var calls = 0
        XCTAssertThrowsError(
            try retry(clock).run { () throws -> Int in
                calls += 1
                throw timeout
            }
        ) { error in
            XCTAssertEqual((error as? NATSError)?.isPassing, true)
        }
        // Tries at 0, 0.5, 1 and 1.5 s are asked again; the one at 2 s is the last.
        XCTAssertEqual(calls, 5)
        XCTAssertEqual(clock.lines.count, 1)
    }

    func testTriesAreBoundedWhenTheClockDoesNotMove() {
        let clock = Clock()
        let frozen = JetStreamRetry(
            lostAfter: .seconds(2), now: { .zero }, report: { clock.lines.append($0) },
            pause: {
                clock.pauses += 1
                return false
            })
        XCTAssertThrowsError(try frozen.run { () throws -> Int in throw timeout })
        XCTAssertEqual(clock.pauses, 4, "as many tries as fit in lostAfter")
    }

    func testAnErrorThatDoesNotPassIsThrownAtOnce() {
        let clock = Clock()
        var calls = 0
        let refused = NATSError(NATS_ERR, code: JSStreamNameExistErr, doing: "making stream 'S'")
        XCTAssertThrowsError(
            try retry(clock).run { () throws -> Int in
                calls += 1
                throw refused
            })
        XCTAssertEqual(calls, 1)
        XCTAssertEqual(clock.lines, [])
    }

    func testStoppedWhileWaitingEndsWithoutAResultOrAnError() throws {
        let clock = Clock()
        var calls = 0
        let result = try retry(clock, stopAfter: 1).run { () throws -> Int in
            calls += 1
            throw timeout
        }
        XCTAssertNil(result)
        XCTAssertEqual(calls, 1)
    }
}
