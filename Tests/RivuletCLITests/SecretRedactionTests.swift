import BinaryTestSupport
import Foundation
import HTTPTestServer
import RivuletTestSupport
import XCTest

/// Secrets are masked by value wherever rivulet writes text: a key sent in any query parameter or
/// header, and echoed back by the server in its body, shows up in no output stream or file, in
/// no encoding.
final class SecretRedactionTests: BinaryTestCase {
    func testASecretInAnyParameterEchoedInABodyAppearsInNoOutput() throws {
        let secrets = [
            "MY_APP_KEY": "k3y/with+plus=and \"quotes\"&amp",
            "SIGNING_SECRET": "sig-\u{00E9}t\u{00E9}-s3cret",
            "SERVICE_TOKEN": "tok_ABCdef0123456789",
            "ACCOUNT": "acct-98765-private",
        ]
        let server = try serve { request, count in
            // Echo everything the request carried, as a failing answer first, then as items.
            let echo: [String: Any] = [
                "uri": request.uri, "query": request.query,
                "headers": Dictionary(request.headers, uniquingKeysWith: { $1 }),
            ]
            let body = String(decoding: try! JSONSerialization.data(withJSONObject: echo), as: UTF8.self)
            if count == 0 {
                return .json("{\"message\": \"bad request: \(request.uri)\", \"echo\": \(body)}", status: 503)
            }
            return .json("[\(body)]")
        }
        try """
        secrets: [ACCOUNT]
        source:
          http:
            url: "\(server.baseURL)/echo"
            query: { appid: "${MY_APP_KEY}", sig: "${SIGNING_SECRET}", access_key: "${ACCOUNT}" }
            headers: { X-Custom-Auth: "${SERVICE_TOKEN}" }
            retry: { max: 3, backoff: 10ms }
        ops:
          - log: seen
        sink: { file: out.jsonl }

        """.write(to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        let cassette = directory.appendingPathComponent("cassette.json")
        let result = try runRivulet(
            ["run", directory.appendingPathComponent("p.yaml").path, "--trace", "--record", cassette.path],
            environment: secrets)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(server.received.count, 2)
        XCTAssertEqual(server.received.first?.query["appid"], secrets["MY_APP_KEY"], "the real key was sent")
        let outputs = [
            ("stdout", result.stdout), ("stderr", result.stderr),
            ("cassette", try String(contentsOf: cassette, encoding: .utf8)),
            ("file", try String(contentsOf: directory.appendingPathComponent("out.jsonl"), encoding: .utf8)),
        ]
        XCTAssertTrue(outputs[1].1.contains("REDACTED"), "the error and the trace mention it, masked")
        for (name, value) in secrets {
            var escaped: [String] = [value, Data(value.utf8).base64EncodedString()]
            escaped.append(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            escaped.append(value.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!)
            let json = String(decoding: try JSONSerialization.data(withJSONObject: [value]), as: UTF8.self)
            escaped.append(String(json.dropFirst(2).dropLast(2)))
            for form in Set(escaped) {
                for (output, text) in outputs {
                    XCTAssertFalse(text.contains(form), "\(name) as '\(form)' appears in \(output)")
                }
            }
        }
    }

    func testAPasswordInANATSURLIsPrintedNowhere() throws {
        // Nothing listens on port 1: every run fails, naming the server it could not reach.
        let file = directory.appendingPathComponent("nats.yaml")
        func write(url: String?) throws {
            try """
            source: { nats: { \(url.map { "url: \"\($0)\", " } ?? "")subject: orders, lostAfter: 1s } }
            sink: stdout
            """.write(to: file, atomically: true, encoding: .utf8)
        }
        var outputs: [(String, String)] = []
        try write(url: "nats://alice:pw9@127.0.0.1:1")
        let fromFile = try runRivulet(["run", file.path], timeout: 60)
        XCTAssertNotEqual(fromFile.status, 0)
        outputs.append(("run, url in the file", fromFile.stdout + fromFile.stderr))
        let graph = try runRivulet(["graph", file.path])
        XCTAssertEqual(graph.status, 0, graph.stderr)
        assertContains(graph.stdout, "REDACTED@127.0.0.1:1")
        outputs.append(("graph", graph.stdout + graph.stderr))
        let set = try runRivulet(
            ["run", file.path, "--set", "source.nats.url=nats://carol:pw9@127.0.0.1:1"], timeout: 60)
        XCTAssertNotEqual(set.status, 0)
        outputs.append(("run --set", set.stdout + set.stderr))
        try write(url: nil)
        let fromEnvironment = try runRivulet(
            ["run", file.path], environment: ["NATS_URL": "nats://bob:pw9@127.0.0.1:1,nats://tok3n9@127.0.0.1:2"],
            timeout: 60)
        XCTAssertNotEqual(fromEnvironment.status, 0)
        outputs.append(("run, $NATS_URL", fromEnvironment.stdout + fromEnvironment.stderr))
        let partitions = try runRivulet(
            ["partitions", "--nats", "nats://dave:pw9@127.0.0.1:1", "--group", "g"], timeout: 60)
        XCTAssertNotEqual(partitions.status, 0)
        outputs.append(("partitions", partitions.stdout + partitions.stderr))
        for (name, output) in outputs {
            for secret in ["pw9", "tok3n9"] {
                XCTAssertFalse(output.contains(secret), "\(name) shows \(secret): \(output)")
            }
        }
    }

    func testASecretIsMaskedBeforeTextIsCutShort() throws {
        // A 128-character token: cut to a trace's 120 characters, a table column's 30 or a graph
        // label's 48 before it was masked, most of it was printed.
        let token = (0..<4).map { _ in UUID().uuidString.replacingOccurrences(of: "-", with: "") }.joined()
        try """
        source: { events: [{ at: 0ms, next: { auth: "${API_TOKEN}" } }, { at: 0ms, complete: true }] }
        ops:
          - log: "${API_TOKEN}"
        sink: { table: { columns: [{ title: auth, value: .auth, width: 30 }] } }

        """.write(to: directory.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        let pipeline = directory.appendingPathComponent("p.yaml").path
        let environment = ["API_TOKEN": token]
        let run = try runRivulet(["run", pipeline, "--trace"], environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        let text = try runRivulet(["graph", pipeline], environment: environment)
        let svg = try runRivulet(["graph", pipeline, "--format", "svg"], environment: environment)
        for (name, output) in [
            ("stdout (the table)", run.stdout), ("stderr (the trace)", run.stderr), ("graph", text.stdout),
            ("svg", svg.stdout),
        ] {
            XCTAssertTrue(output.contains("REDACTED"), "\(name): \(output)")
            let pieces = stride(from: 0, to: token.count - 8, by: 4).map {
                String(token.dropFirst($0).prefix(8))
            }
            XCTAssertNil(pieces.first { output.contains($0) }, "\(name) shows part of the token: \(output)")
        }
    }
}
