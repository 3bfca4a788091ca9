import Components
import Foundation
@_spi(Host) import Pipeline
import RivuletTestSupport
@_spi(Host) import Tooling
import XCTest

/// The pipelines in Pipelines/: every one has a test file, and every test passes.
final class ExamplePipelineTests: LeakCheckingTestCase {
    static let pipelines = Repository.root.appendingPathComponent("Pipelines")

    func testEveryPipelineHasATestFileAndEveryTestPasses() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.pipelines.path).filter {
            $0.hasSuffix(".yaml")
        }
        let pipelines = names.filter { !$0.hasSuffix(".test.yaml") }
        XCTAssertGreaterThanOrEqual(pipelines.count, 4)
        for pipeline in pipelines {
            let testFile = pipeline.replacingOccurrences(of: ".yaml", with: ".test.yaml")
            XCTAssertTrue(names.contains(testFile), "\(pipeline) has no \(testFile)")
        }
        let runner = PipelineTestRunner(
            registry: ComponentRegistry(registering: BuiltinComponents.all), environment: [:])
        var passed = 0
        for testFile in names.filter({ $0.hasSuffix(".test.yaml") }).sorted() {
            let result = runner.run(testFile: Self.pipelines.appendingPathComponent(testFile).path)
            XCTAssertEqual(result.diagnostics.map(\.description), [], testFile)
            for testCase in result.cases {
                XCTAssertTrue(testCase.passed, "\(testFile): \(testCase.name)\n\(testCase.report)")
                if testCase.passed { passed += 1 }
            }
        }
        XCTAssertGreaterThanOrEqual(passed, 10)
    }
}
