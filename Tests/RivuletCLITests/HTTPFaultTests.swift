import BinaryTestSupport
import Foundation
import HTTPTestServer
import RivuletTestSupport
import XCTest

/// HTTP that never ends does not hang a run: the timeout bounds the whole exchange, body
/// included, and its retry is sent; a Link that leads back to a fetched page stops; a refused
/// connection fails at once.
final class HTTPFaultTests: BinaryTestCase {
    private static let items = Array("[1, 2, 3]".utf8)

    func testABodyThatStallsOrDripsTimesOutAndItsRetryIsSent() throws {
        for drip in [nil, 0.05] as [Double?] {
            let server = try serve { _, count in
                count == 0
                    ? .stall(
                        status: 200, headers: [("Content-Type", "application/json")], body: Self.items, before: 3,
                        dripEvery: drip)
                    : .json("[1, 2, 3]")
            }
            let started = Date()
            let result = try run(
                "source: { http: { url: \"\(server.baseURL)/feed\", timeout: 300ms, retry: { max: 3, backoff: 10ms } } }\nsink: stdout\n"
            )
            XCTAssertEqual(result.status, 0, "drip \(String(describing: drip)): \(result.stderr)")
            XCTAssertEqual(result.stdout, "1\n2\n3\n")
            XCTAssertEqual(server.received.count, 2, "the retry was sent")
            assertContains(result.stderr, "no answer within 300ms", "attempt 2 of 3")
            XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        }
    }

    func testABodyThatAlwaysStallsFailsAfterItsAttempts() throws {
        let server = try serve { _, _ in
            .stall(status: 200, headers: [("Content-Type", "application/json")], body: Self.items, before: 1)
        }
        let result = try run(
            "source: { http: { url: \"\(server.baseURL)/feed\", timeout: 200ms, retry: { max: 2, backoff: 10ms } } }\nsink: stdout\n"
        )
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(server.received.count, 2)
        assertContains(result.stderr, "GET \(server.baseURL)/feed: no answer within 200ms (after 2 attempts)")
    }

    func testALinkBackToAFetchedPageStopsThePaging() throws {
        let server = try serve { request, _ in
            let next = request.path == "/p1" ? "/p2" : "/p1"
            return .json("[\"\(request.path)\"]", headers: [("Link", "<\(next)>; rel=\"next\"")])
        }
        let result = try run(
            "source: { http: { url: \"\(server.baseURL)/p1\", paginate: link } }\nsink: stdout\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "\"/p1\"\n\"/p2\"\n")
        XCTAssertEqual(server.received.map(\.path), ["/p1", "/p2"])
        assertContains(result.stderr, "was fetched already; stopping here")
    }

    func testARefusedConnectionFailsAtOnceNotAfterTheTimeout() throws {
        // A port nothing listens on: bind one, note it, close it.
        let server = try serve { _, _ in .json("[]") }
        let port = server.port
        server.shutdown()
        let started = Date()
        let result = try run(
            "source: { http: { url: \"http://127.0.0.1:\(port)/x\", timeout: 20s, retry: { max: 3, backoff: 10ms } } }\nsink: stdout\n"
        )
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "three refused attempts take no time")
        assertContains(result.stderr, "(after 3 attempts)")
    }
}
