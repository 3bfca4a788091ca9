import BinaryTestSupport
import Components
import Foundation
import XCTest

/// `rivulet init`: a starter pipeline and its test that pass as written, never over a file.
final class InitCommandTests: BinaryTestCase {
    private func inDirectory(_ command: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let binary = productsDirectory().appendingPathComponent("rivulet").path
        let shell = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "cd '\(directory.path)' && '\(binary)' \(command)"])
        let result = shell.communicate(timeout: 60)
        guard case .exited(let status) = result.termination else { return (-1, "", "") }
        return (
            status, String(decoding: result.standardOutput, as: UTF8.self),
            String(decoding: result.standardError, as: UTF8.self)
        )
    }

    func testTheStarterPipelineRunsAndItsTestPasses() throws {
        let made = try inDirectory("init orders")
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertTrue(made.stdout.hasPrefix("wrote orders.yaml and orders.test.yaml\n"), made.stdout)
        // What to run next, its comments in one column whatever the name's length.
        XCTAssertEqual(
            made.stdout,
            """
            wrote orders.yaml and orders.test.yaml
            next:
              rivulet run orders.yaml          # prints the orders that have an amount, as they come
              rivulet test orders.test.yaml    # checks them on a virtual clock, at once
              rivulet components               # every source, operator and sink

            """)
        let run = try inDirectory("run orders.yaml --clock virtual")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(
            run.stdout, "{\"order\":1,\"what\":\"tea\",\"cents\":400}\n{\"order\":3,\"what\":\"cake\",\"cents\":1200}\n"
        )
        let test = try inDirectory("test orders.test.yaml")
        XCTAssertEqual(test.status, 0, test.stdout)
        XCTAssertTrue(test.stdout.hasSuffix("1 passed, 0 failed\n"))
        XCTAssertEqual(try inDirectory("lint .").status, 0)

        let again = try inDirectory("init orders")
        XCTAssertEqual(again.status, 2)
        XCTAssertEqual(again.stderr, "error: orders.yaml exists already; init writes only new files\n")
        XCTAssertEqual(try inDirectory("init ../elsewhere").status, 2)
        XCTAssertEqual(try inDirectory("init").status, 0, "the default name is pipeline")
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("pipeline.yaml").path))
    }
}
