import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// docs/postgres.md as a user reads it: every pipeline it shows lints clean.
final class PostgresDocsTests: BinaryTestCase {
    func testEveryPipelineThePageShowsLintsClean() throws {
        let page = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/postgres.md"), encoding: .utf8)
        let blocks = page.components(separatedBy: "```yaml\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        XCTAssertEqual(blocks.count, 4)
        for (index, block) in blocks.enumerated() {
            let file = directory.appendingPathComponent("block-\(index).yaml")
            // A sink-only block gets a source, as a user adds one.
            let text = block.hasPrefix("sink:") ? "source: { interval: 1s }\n" + block : block
            try text.write(to: file, atomically: true, encoding: .utf8)
            let lint = try runRivulet(
                ["lint", file.path], environment: ["DATABASE_URL": "postgresql://rivulet@127.0.0.1:5432/shop"])
            XCTAssertEqual(lint.status, 0, "\(block)\n\(lint.stderr)")
        }
    }
}
