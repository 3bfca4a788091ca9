import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// Every input fuzzing ever crashed on (Tests/Fuzz/Regressions) and every seed runs through its
/// fuzz target without a crash: a crash found by `make fuzz` becomes a test by committing it.
final class FuzzRegressionTests: XCTestCase {
    func testEverySeedAndEveryCrashFoundRunsThroughItsTargetWithoutCrashing() throws {
        let root = Repository.root
        let binary = productsDirectory().appendingPathComponent("RivuletFuzz").path
        let inputs: [String: [String]] = [
            "pipeline": ["Pipelines", "Tests/RivuletCLITests/LintCorpus"], "testfile": ["Pipelines"],
            "expression": ["Tests/Fuzz/Seeds/expression"], "json": ["Tests/Fuzz/Seeds/json", "Examples/recordings"],
            "marbles": ["Tests/Fuzz/Seeds/marbles"], "html": ["Tests/Fuzz/Seeds/html"],
            "webhook": ["Tests/Fuzz/Seeds/webhook"], "sqlite": ["Tests/Fuzz/Seeds/sqlite"],
            "operators": ["Tests/Fuzz/Seeds/operators"], "wasm": ["Tests/Fuzz/Seeds/wasm"],
            "storedstate": ["Tests/Fuzz/Seeds/storedstate"], "pgoutput": ["Tests/Fuzz/Seeds/pgoutput"],
        ]
        for (target, directories) in inputs.sorted(by: { $0.key < $1.key }) {
            let paths = (directories + ["Tests/Fuzz/Regressions/\(target)"]).map {
                root.appendingPathComponent($0).path
            }
            let process = try ChildProcess(executable: binary, arguments: [target] + paths, input: .null)
            let output = process.communicate(timeout: 120)
            let text = String(decoding: output.standardOutput + output.standardError, as: UTF8.self)
            XCTAssertEqual(output.termination, .exited(0), "\(target): \(text)")
            assertContains(text, "\(target): ")
        }
    }
}
