import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// The API pipelines of `Pipelines/` run offline from their recordings with the README's
/// commands, and no recording holds a key or token.
final class APIPipelineTests: XCTestCase {

    /// The README's offline commands, pipeline and recording.
    private func readmeCommands() throws -> [(pipeline: String, recording: String)] {
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        return readme.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.first == ".build/debug/rivulet", words.count >= 5, words[1] == "run",
                let replay = words.firstIndex(of: "--replay")
            else { return nil }
            return (String(words[2]), String(words[replay + 1]))
        }
    }

    func testEveryAPIPipelineRunsOfflineFromItsRecording() throws {
        let commands = try readmeCommands()
        XCTAssertEqual(commands.count, 11, "the README names the six API screens and their five variants")
        for (pipeline, recording) in commands {
            let result = try runRivulet(
                [
                    "run", Repository.root.appendingPathComponent(pipeline).path, "--replay",
                    Repository.root.appendingPathComponent(recording).path,
                ], environment: ["NYT_API_KEY": "", "GITHUB_TOKEN": "", "GH_TOKEN": "", "FOURSQUARE_API_KEY": ""])
            XCTAssertEqual(result.status, 0, "\(pipeline): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("has no answer"), "\(pipeline): \(result.stderr)")
            XCTAssertGreaterThan(result.stdout.split(separator: "\n").count, 4, "\(pipeline) shows a table")
            if pipeline == "Pipelines/github-user-repos.yaml" {
                // The recording's last user has no repositories; the unknown one after it is swallowed.
                XCTAssertTrue(
                    result.stdout.contains("No repositories for this user.\n"), "as the seed says it: \(result.stdout)")
            }
        }
    }

    func testNoRecordingHoldsAKeyOrToken() throws {
        let directory = Repository.root.appendingPathComponent("Examples/recordings")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
        XCTAssertGreaterThanOrEqual(files.count, 6)
        for file in files {
            let data = try Data(contentsOf: directory.appendingPathComponent(file))
            let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            for case let exchange as [String: Any] in root["exchanges"] as? [Any] ?? [] {
                let request = exchange["request"] as? [String: Any] ?? [:]
                let query = request["query"] as? [String: String] ?? [:]
                let headers = request["headers"] as? [String: String] ?? [:]
                for (name, value) in query where ["api-key", "token", "client_secret"].contains(name.lowercased()) {
                    XCTAssertEqual(value, "REDACTED", "\(file): query \(name)")
                }
                for (name, value) in headers where name.lowercased() == "authorization" {
                    XCTAssertEqual(value, "REDACTED", "\(file): header \(name)")
                }
            }
        }
    }
}
