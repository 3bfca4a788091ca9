import Components
import RivuletTestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// Programs started without Foundation's Process: streams, exit statuses, signals and timeouts.
final class ChildProcessTests: LeakCheckingTestCase {
    func testInputIsPassedThroughAndBothOutputsAreCollected() throws {
        let input = (0..<20_000).map { "line \($0)\n" }.joined()  // More than a pipe holds.
        let process = try ChildProcess(
            executable: "sh", arguments: ["-c", "cat; echo oops >&2; exit 3"], input: .pipe)
        let output = process.communicate(input: Array(input.utf8), timeout: 30)
        XCTAssertEqual(String(decoding: output.standardOutput, as: UTF8.self), input)
        XCTAssertEqual(String(decoding: output.standardError, as: UTF8.self), "oops\n")
        XCTAssertEqual(output.termination, .exited(3))
        XCTAssertEqual(output.termination.status, 3)
        XCTAssertFalse(output.timedOut)
    }

    func testAProgramPastItsTimeoutIsKilled() throws {
        let process = try ChildProcess(executable: "sleep", arguments: ["30"])
        let output = process.communicate(timeout: 0.2)
        XCTAssertTrue(output.timedOut)
        XCTAssertEqual(output.termination, .signalled(SIGKILL))
        XCTAssertEqual(output.termination.status, 128 + SIGKILL)
    }

    func testTheChildTakesSignalsTheParentBlocks() throws {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &set, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let process = try ChildProcess(executable: "sleep", arguments: ["30"], output: .null, error: .null)
        XCTAssertNil(process.exited())
        process.send(SIGTERM)
        XCTAssertEqual(process.wait(), .signalled(SIGTERM))
        XCTAssertEqual(process.exited(), .signalled(SIGTERM), "the result is kept once reaped")
    }

    func testAProgramThatDoesNotExistIsAnError() {
        XCTAssertThrowsError(try ChildProcess(executable: "no-such-program-here", arguments: [])) { error in
            XCTAssertTrue("\(error)".contains("cannot start 'no-such-program-here'"), "\(error)")
        }
    }

    func testAChildThatStopsReadingDoesNotKillTheWriter() throws {
        let process = try ChildProcess(executable: "head", arguments: ["-c", "5"], input: .pipe)
        let output = process.communicate(input: Array(repeating: UInt8(ascii: "x"), count: 1 << 20), timeout: 30)
        XCTAssertEqual(output.standardOutput, Array("xxxxx".utf8))
        XCTAssertEqual(output.termination, .exited(0))
    }

    func testASignalToItsGroupReachesWhatTheChildStarted() throws {
        // The child starts a grandchild that holds its output open, then exits: only a signal to
        // the group ends the grandchild, and with it the output.
        let process = try ChildProcess(
            executable: "sh", arguments: ["-c", "sleep 1000 & echo started"], output: .pipe, ownGroup: true)
        var buffer = [UInt8](repeating: 0, count: 64)
        XCTAssertGreaterThan(read(process.standardOutput, &buffer, buffer.count), 0)
        XCTAssertEqual(process.wait(), .exited(0))
        process.sendToGroup(SIGKILL)
        var ended = pollfd(fd: process.standardOutput, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&ended, 1, 5000), 1, "the grandchild's end closed the output")
        XCTAssertEqual(read(process.standardOutput, &buffer, buffer.count), 0)
    }
}
