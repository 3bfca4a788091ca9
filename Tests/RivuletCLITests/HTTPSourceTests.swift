import BinaryTestSupport
import Components
import Foundation
import HTTPTestServer
import RivuletTestSupport
import XCTest

/// The HTTP sources through the binary, against a server on 127.0.0.1: pagination, retries, rate
/// limits, cancellation, record and replay, and keys kept out of every output.
final class HTTPSourceTests: BinaryTestCase {
    private func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    // MARK: Pagination

    func testLinkPaginationStopsAtTheLastPage() throws {
        let server = try serve { request, _ in
            let page = Int(request.query["page"] ?? "1") ?? 1
            let next =
                page < 3 ? [("Link", "</items?page=\(page + 1)>; rel=\"next\", </items?page=3>; rel=\"last\"")] : []
            return .json("[{\"n\": \(page * 10 + 1)}, {\"n\": \(page * 10 + 2)}]", headers: next)
        }
        let result = try run(
            "source: { http: { url: \"\(server.baseURL)/items\", paginate: link } }\nops: [{ map: .n }]\nsink: stdout\n"
        )
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(lines(result.stdout), ["11", "12", "21", "22", "31", "32"])
        XCTAssertEqual(server.received.map(\.uri), ["/items", "/items?page=2", "/items?page=3"])
    }

    func testPageNumberPaginationStopsAtTheFirstEmptyPage() throws {
        let server = try serve { request, _ in
            let page = Int(request.query["p"] ?? "") ?? -1
            return .json(page <= 2 ? "{\"data\": [\(page)]}" : "{\"data\": []}")
        }
        let result = try run(
            "source: { http: { url: \"\(server.baseURL)/list\", select: .data, paginate: page, pageParam: p, pageStart: 1, emit: all } }\nsink: stdout\n"
        )
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(lines(result.stdout), ["[1,2]"])
        XCTAssertEqual(server.received.map { $0.query["p"] }, ["1", "2", "3"])
    }

    func testCursorPaginationFollowsTheBodyUntilItHasNoCursor() throws {
        let server = try serve { request, _ in
            switch request.query["after"] {
            case nil: return .json("{\"items\": [\"a\"], \"next\": \"c1\"}")
            case "c1": return .json("{\"items\": [\"b\"], \"next\": \"c2\"}")
            default: return .json("{\"items\": [\"c\"], \"next\": null}")
            }
        }
        let result = try run(
            "source: { http: { url: \"\(server.baseURL)/feed\", select: .items, paginate: cursor, cursorParam: after, cursor: .next, emit: page } }\nsink: stdout\n"
        )
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(lines(result.stdout), ["[\"a\"]", "[\"b\"]", "[\"c\"]"])
        XCTAssertEqual(server.received.count, 3)
    }

    // MARK: Retries and failures

    func testA429WithRetryAfterIsRetriedAfterThatLongAndNotBefore() throws {
        let server = try serve { _, count in
            count == 0
                ? .json("{\"message\": \"slow down\"}", status: 429, headers: [("Retry-After", "2")])
                : .json("[\"ok\"]")
        }
        let result = try run("source: { http: { url: \"\(server.baseURL)/limited\" } }\nsink: stdout\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "\"ok\"\n")
        let times = server.arrivals
        XCTAssertEqual(times.count, 2)
        XCTAssertGreaterThanOrEqual(times[1] - times[0], 2.0, "not retried before Retry-After")
        XCTAssertLessThan(times[1] - times[0], 3.0, "retried soon after it")
        assertContains(result.stderr, "429 Too Many Requests from GET")
    }

    func testA404IsNotRetriedAndSaysStatusMessageAndURL() throws {
        let server = try serve { _, _ in
            .json("{\"message\": \"Not Found\", \"documentation_url\": \"https://docs\"}", status: 404)
        }
        let result = try run(
            "source: { http: { url: \"\(server.baseURL)/users/nobody?token=abcdef123\", retry: { backoff: 10ms } } }\nsink: stdout\n"
        )
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(server.received.count, 1, "a 404 is not retried")
        assertContains(result.stderr, "GET \(server.baseURL)/users/nobody?token=REDACTED: 404 Not Found: Not Found")
        XCTAssertFalse(result.stderr.contains("abcdef123"))
    }

    func testADroppedConnectionAndA503AreRetried() throws {
        let server = try serve { _, count in
            switch count {
            case 0: return .drop
            case 1: return .json("{\"message\": \"busy\"}", status: 503)
            default: return .json("[1]")
            }
        }
        let result = try run(
            "source: { http: { url: \"\(server.baseURL)/flaky\", retry: { backoff: 50ms } } }\nsink: stdout\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "1\n")
        XCTAssertEqual(server.received.count, 3)
    }

    func testRetriesGiveUpWithTheLastStatus() throws {
        let server = try serve { _, _ in .json("{\"message\": \"down\"}", status: 500) }
        let result = try run(
            "source: { http: { url: \"\(server.baseURL)/down\", retry: { max: 3, backoff: 10ms } } }\nsink: stdout\n")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(server.received.count, 3)
        assertContains(result.stderr, "500 Internal Server Error: down (after 3 attempts)")
    }

    func testASlowAnswerTimesOutIsRetriedAndThenFails() throws {
        let server = try serve { _, _ in .json("[1]", delay: 2) }
        let result = try run(
            "source: { http: { url: \"\(server.baseURL)/slow\", timeout: 300ms, retry: { max: 2, backoff: 10ms } } }\nsink: stdout\n"
        )
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(server.received.count, 2, "the timeout was retried once")
        assertContains(result.stderr, "GET \(server.baseURL)/slow: no answer within 300ms (after 2 attempts)")
    }

    func testAMalformedBodyIsAnErrorShowingItsFirstBytes() throws {
        let server = try serve { _, _ in
            .respond(status: 200, headers: [("Content-Type", "text/html")], body: Array("<html>oops</html>".utf8))
        }
        let result = try run("source: { http: { url: \"\(server.baseURL)/page\" } }\nsink: stdout\n")
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "the response is not JSON (text/html): 17 bytes starting \"<html>oops</html>\"")
    }

    func testFlatMapLatestClosesTheConnectionOfTheRequestItDrops() throws {
        let server = try serve { request, _ in
            let q = request.query["q"] ?? ""
            return .json("[\"\(q)-1\", \"\(q)-2\"]", delay: q == "slow" ? 3 : 0.05)
        }
        let result = try run(
            """
            source: { events: [{ at: 0ms, next: slow }, { at: 300ms, next: fast }, { at: 350ms, complete: true }] }
            ops:
              - flatMapLatest: { http: { url: "\(server.baseURL)/search", query: { q: "{{ . }}" } } }
            sink: stdout
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(lines(result.stdout), ["\"fast-1\"", "\"fast-2\""])
        let log = server.log
        let closed = log.contains { event in
            if case .closedBeforeAnswer(let uri, _) = event { return uri == "/search?q=slow" }
            return false
        }
        XCTAssertTrue(closed, "the dropped request's connection was closed before its answer: \(log)")
        XCTAssertFalse(
            log.contains { event in
                if case .answered(let uri, _, _) = event { return uri == "/search?q=slow" }
                return false
            })
    }

    // MARK: The APIs' own formats

    func testGitHubHeadersIdBasedLinkAndARateLimitResetAtTheServer() throws {
        let server = try serve { request, count in
            guard request.header("User-Agent") != nil, request.header("X-GitHub-Api-Version") == "2022-11-28",
                request.header("Accept") == "application/vnd.github+json",
                request.header("Authorization") == "Bearer ghp_test_token_123"
            else {
                return .json("{\"message\": \"Request forbidden by administrative rules.\"}", status: 403)
            }
            if request.path == "/users/octocat/repos" && count == 0 {
                let reset = Int(Date().timeIntervalSince1970) + 1
                return .json(
                    "{\"message\": \"API rate limit exceeded for user ID 1.\"}", status: 403,
                    headers: [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", String(reset))])
            }
            if request.path == "/users/octocat/repos" {
                return .json(
                    "[{\"full_name\": \"octocat/a\"}]",
                    headers: [
                        ("Link", "</user/583231/repos?page=2>; rel=\"next\", </user/583231/repos?page=2>; rel=\"last\"")
                    ])
            }
            return .json("[{\"full_name\": \"octocat/b\"}]")
        }
        let result = try run(
            "source: { github.userRepos: { user: octocat, baseURL: \"\(server.baseURL)\" } }\nops: [{ map: .full_name }]\nsink: stdout\n",
            environment: ["GITHUB_TOKEN": "ghp_test_token_123"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(lines(result.stdout), ["\"octocat/a\"", "\"octocat/b\""])
        XCTAssertEqual(
            server.received.map(\.path), ["/users/octocat/repos", "/users/octocat/repos", "/user/583231/repos"])
        let times = server.arrivals
        XCTAssertGreaterThanOrEqual(times[1] - times[0], 1.0, "waited for the reset")
        assertContains(result.stderr, "403 Forbidden from GET")
        XCTAssertFalse(result.stderr.contains("ghp_test_token_123"))
    }

    func testFoursquareSendsItsBearerKeyAndVersionAndFollowsTheCursor() throws {
        let server = try serve { request, _ in
            guard request.header("Authorization") == "Bearer fsq-service-key-1",
                request.header("X-Places-Api-Version") == "2025-06-17"
            else { return .json("{\"message\": \"Invalid request token.\"}", status: 401) }
            if request.query["cursor"] == nil {
                return .json(
                    "{\"results\": [{\"name\": \"A\"}], \"context\": {}}",
                    headers: [("Link", "</places/search?query=cafe&limit=1&cursor=c3I6MQ>; rel=\"next\"")])
            }
            return .json("{\"results\": [{\"name\": \"B\"}], \"context\": {}}")
        }
        let pipeline =
            "source: { foursquare.search: { query: cafe, limit: 1, baseURL: \"\(server.baseURL)\" } }\nops: [{ map: .name }]\nsink: stdout\n"
        let result = try run(pipeline, environment: ["FOURSQUARE_API_KEY": "fsq-service-key-1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(lines(result.stdout), ["\"A\"", "\"B\""])
        XCTAssertEqual(server.received.last?.query["cursor"], "c3I6MQ")
        let wrong = try run(pipeline, environment: ["FOURSQUARE_API_KEY": "bad-key-0000"])
        XCTAssertEqual(wrong.status, 1)
        assertContains(wrong.stderr, "401 Unauthorized: Invalid request token.")
        XCTAssertFalse(wrong.stderr.contains("bad-key-0000"))
    }

    // MARK: Bad input

    func testBadRecordReplayClockAndBaseURLExitTwoWithAMessage() throws {
        let pipeline = "source: { http: { url: \"http://127.0.0.1:9/x\" } }\nsink: stdout\n"
        let both = try run(pipeline, ["--record", "a.json", "--replay", "b.json"])
        XCTAssertEqual(both.status, 2)
        assertContains(both.stderr, "--record and --replay cannot be used together")
        let missing = try run(pipeline, ["--replay", directory.appendingPathComponent("none.json").path])
        XCTAssertEqual(missing.status, 2)
        assertContains(missing.stderr, "--replay: no such file")
        let virtual = try run(pipeline, ["--clock", "virtual"])
        XCTAssertEqual(virtual.status, 2)
        assertContains(
            virtual.stderr, "HTTP sources need the real clock: run without --clock virtual, or with --replay FILE")
        let relative = try run("source: { github.search: { q: swift, baseURL: api.github.com } }\nsink: stdout\n")
        XCTAssertEqual(relative.status, 2)
        assertContains(
            relative.stderr, "baseURL 'api.github.com' is not an absolute URL (such as http://127.0.0.1:8080)")
        let notJSON = directory.appendingPathComponent("bad.json")
        try "exchanges: none".write(to: notJSON, atomically: true, encoding: .utf8)
        let badRecording = try run(pipeline, ["--replay", notJSON.path])
        XCTAssertEqual(badRecording.status, 2)
        assertContains(badRecording.stderr, "the recording \(notJSON.path) is not JSON")
        XCTAssertFalse((both.stderr + virtual.stderr + relative.stderr + badRecording.stderr).contains("Fatal error"))
    }

    // MARK: Record, replay and secrets

    func testRecordThenReplayWithoutTheNetworkAndNoKeyAnywhere() throws {
        let key = "nyt-secret-key-4711"
        let server = try serve { request, _ in
            guard request.query["api-key"] == key else {
                return .json("{\"fault\": {\"faultstring\": \"Invalid ApiKey\"}}", status: 401)
            }
            let page = Int(request.query["page"] ?? "0") ?? 0
            let docs = (0..<(page == 0 ? 10 : 3)).map {
                "{\"headline\": {\"main\": \"story \(page * 10 + $0)\"}, \"multimedia\": []}"
            }
            return .json(
                "{\"status\": \"OK\", \"response\": {\"docs\": [\(docs.joined(separator: ","))], \"meta\": {\"hits\": 13}}}"
            )
        }
        let pipeline =
            "source: { nyt.search: { q: climate, baseURL: \"\(server.baseURL)\" } }\nops: [{ map: .headline.main }]\nsink: stdout\n"
        let recording = directory.appendingPathComponent("nyt.json").path
        let recorded = try run(pipeline, ["--record", recording], environment: ["NYT_API_KEY": key])
        XCTAssertEqual(recorded.status, 0, recorded.stderr)
        XCTAssertEqual(lines(recorded.stdout).count, 13)
        XCTAssertEqual(server.received.count, 2, "two pages: the second is short")
        let file = try String(contentsOfFile: recording, encoding: .utf8)
        XCTAssertFalse(file.contains(key), "the key is not in the recording")
        XCTAssertTrue(file.contains("REDACTED"))
        server.shutdown()
        let replayed = try run(pipeline, ["--replay", recording])
        XCTAssertEqual(replayed.status, 0, replayed.stderr)
        XCTAssertEqual(replayed.stdout, recorded.stdout)
        let failed = try run(pipeline.replacingOccurrences(of: "climate", with: "other"), ["--replay", recording])
        XCTAssertEqual(failed.status, 1)
        assertContains(failed.stderr, "has no answer for GET /svc/search/v2/articlesearch.json")
        for output in [recorded.stdout, recorded.stderr, replayed.stdout, replayed.stderr, failed.stderr] {
            XCTAssertFalse(output.contains(key))
        }
    }

    func testAWrongKeyIsReportedWithoutShowingIt() throws {
        let server = try serve { _, _ in
            .json("{\"fault\": {\"faultstring\": \"Invalid ApiKey\"}}", status: 401)
        }
        let result = try run(
            "source: { nyt.search: { q: x, baseURL: \"\(server.baseURL)\" } }\nsink: stdout\n",
            environment: ["NYT_API_KEY": "wrong-key-9999"])
        XCTAssertEqual(result.status, 1)
        assertContains(result.stderr, "401 Unauthorized: Invalid ApiKey", "api-key=REDACTED")
        XCTAssertFalse(result.stderr.contains("wrong-key-9999"))
        let missing = try run(
            "source: { nyt.search: { q: x, baseURL: \"\(server.baseURL)\" } }\nsink: stdout\n",
            environment: ["NYT_API_KEY": "", "NYT_KEY": ""])
        XCTAssertEqual(missing.status, 1)
        assertContains(missing.stderr, "set NYT_API_KEY to your NYT API key")
    }
}
