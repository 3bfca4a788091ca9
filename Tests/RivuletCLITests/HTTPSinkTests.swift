import BinaryTestSupport
import Foundation
import HTTPTestServer
import RivuletTestSupport
import XCTest

/// The `http` sink through the binary, against the test server on 127.0.0.1.
final class HTTPSinkTests: BinaryTestCase {
    private func events(_ count: Int) -> String {
        (1...count).map { "{ at: \($0 * 10)ms, next: { id: \($0) } }" }.joined(separator: ", ")
    }

    func testEachElementIsPostedAsJSONInOrder() throws {
        let server = try serve { _, _ in .json("{}", status: 201) }
        let result = try run(
            """
            source: { events: [\(events(3)), { at: 100ms, complete: true }] }
            sink: { http: { url: "\(server.baseURL)/orders/{{ .id }}", headers: { Authorization: "Bearer ${HOOK_TOKEN}" } } }
            """, environment: ["HOOK_TOKEN": "s3cret"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let received = server.received
        XCTAssertEqual(received.map(\.uri), ["/orders/1", "/orders/2", "/orders/3"])
        XCTAssertEqual(received.map(\.method), ["POST", "POST", "POST"])
        XCTAssertEqual(
            received.map { String(decoding: $0.body, as: UTF8.self) }, ["{\"id\":1}", "{\"id\":2}", "{\"id\":3}"])
        XCTAssertEqual(received[0].header("content-type"), "application/json")
        XCTAssertEqual(received[0].header("authorization"), "Bearer s3cret")
    }

    func testBatchesByCountAndByPeriodWithABodyTemplate() throws {
        let server = try serve { _, _ in .json("{}") }
        let result = try run(
            """
            source: { events: [\(events(5)), { at: 2s, next: { id: 6 } }, { at: 3s, complete: true }] }
            sink:
              http:
                url: "\(server.baseURL)/bulk"
                method: put
                body: "{{ {count: len(.), ids: map(., .id)} }}"
                batch: { count: 2, period: 500ms }
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(
            server.received.map { String(decoding: $0.body, as: UTF8.self) },
            [
                "{\"count\":2,\"ids\":[1,2]}", "{\"count\":2,\"ids\":[3,4]}", "{\"count\":1,\"ids\":[5]}",
                "{\"count\":1,\"ids\":[6]}",
            ])
        XCTAssertEqual(Set(server.received.map(\.method)), ["PUT"])
        let arrivals = server.arrivals
        XCTAssertGreaterThan(arrivals[2] - arrivals[1], 0.3, "the third batch waited for its period")
    }

    func testAServerErrorIsRetriedThenSucceeds() throws {
        let server = try serve { request, count in
            count == 0 ? .json("{\"message\": \"busy\"}", status: 503, headers: [("Retry-After", "0")]) : .json("{}")
        }
        let result = try run(
            """
            source: { events: [{ at: 0ms, next: { id: 1 } }, { at: 10ms, complete: true }] }
            sink: { http: { url: "\(server.baseURL)/orders" } }
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(server.received.count, 2)
        assertContains(result.stderr, "503 Service Unavailable from POST")
    }

    func testAPermanentClientErrorFailsTheRunOrGoesToTheErrorsStream() throws {
        let server = try serve { request, _ in
            request.uri.hasSuffix("/2") ? .json("{\"message\": \"unknown order\"}", status: 422) : .json("{}")
        }
        let failed = try run(
            """
            source: { events: [\(events(3)), { at: 100ms, complete: true }] }
            sink: { http: { url: "\(server.baseURL)/orders/{{ .id }}" } }
            """)
        XCTAssertEqual(failed.status, 1)
        assertContains(
            failed.stderr, "error: http: POST \(server.baseURL)/orders/2: 422 Unprocessable Entity: unknown order")
        // The failed one (and any queued behind it) were received, not written; the third may not
        // have been read yet when the run failed.
        assertContains(failed.stderr, " read, 1 written, 1 error")
        XCTAssertEqual(server.received.count, 2, "no retry on a 4xx, and nothing after the failure")
        let routed = try run(
            """
            streams:
              orders:
                source: { events: [\(events(3)), { at: 100ms, complete: true }] }
            sinks:
              - { stream: orders, id: hook, http: { url: "\(server.baseURL)/orders/{{ .id }}", onError: errors } }
              - { stream: hook.errors, file: { path: dead.jsonl } }
            """)
        XCTAssertEqual(routed.status, 0, routed.stderr)
        let dead = try String(contentsOf: directory.appendingPathComponent("dead.jsonl"), encoding: .utf8)
        assertContains(dead, "\"element\":{\"id\":2}", "422 Unprocessable Entity: unknown order")
        XCTAssertEqual(dead.split(separator: "\n").count, 1)
        XCTAssertEqual(server.received.count, 5, "the third was sent after the second failed")
    }

    func testRequestsAreRecordedAndReplayedWithTheTokenRedacted() throws {
        let server = try serve { _, _ in .json("{\"ok\": true}") }
        let pipeline = """
            source: { events: [\(events(2)), { at: 100ms, complete: true }] }
            sink: { http: { url: "\(server.baseURL)/orders", headers: { Authorization: "Bearer ${HOOK_TOKEN}" } } }
            """
        let recording = directory.appendingPathComponent("hooks.json").path
        let recorded = try run(pipeline, ["--record", recording], environment: ["HOOK_TOKEN": "s3cret"])
        XCTAssertEqual(recorded.status, 0, recorded.stderr)
        XCTAssertEqual(server.received.count, 2)
        let saved = try String(contentsOfFile: recording, encoding: .utf8)
        XCTAssertFalse(saved.contains("s3cret"), "the token is not recorded")
        server.shutdown()
        let replayed = try run(pipeline, ["--replay", recording], environment: ["HOOK_TOKEN": "s3cret"])
        XCTAssertEqual(replayed.status, 0, replayed.stderr)
    }
}
