import Components
import Foundation
@_spi(Host) import Pipeline
import RivuletTestSupport
import XCTest

/// The HTTP sources and scanPaginate on the virtual clock, answered from recordings: retries and
/// their timing, rate limits, the APIs' page caps, and page-at-a-time reading.
final class HTTPComponentTests: LeakCheckingTestCase {
    private var files: [String] = []

    override func tearDown() {
        for file in files { try? FileManager.default.removeItem(atPath: file) }
        super.tearDown()
    }

    /// A recording file of `exchanges`: (path, query, status, headers, body).
    private func recording(_ exchanges: [(String, [String: String], Int, [String: String], String)]) throws
        -> HTTPSession
    {
        let entries = exchanges.map { path, query, status, headers, body -> [String: Any] in
            [
                "request": ["method": "GET", "path": path, "query": query],
                "response": ["status": status, "headers": headers, "bodyText": body],
            ]
        }
        let data = try JSONSerialization.data(withJSONObject: ["recording": 1, "exchanges": entries])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(UUID().uuidString).json").path
        try data.write(to: URL(fileURLWithPath: path))
        files.append(path)
        return HTTPSession(mode: .replay(path))
    }

    private func run(_ pipeline: String, _ session: HTTPSession, until: Int = 600_000) throws -> PipelineHarness {
        try PipelineHarness().run(pipeline, until: until, services: [session])
    }

    func testScanPaginateFetchesOnePagePerTriggerAndStopsAtTheLast() throws {
        let session = try recording([
            ("/items", [:], 200, ["Link": "<http://api.test/items?page=2>; rel=\"next\""], "[1, 2]"),
            ("/items", ["page": "2"], 200, [:], "[3]"),
        ])
        let harness = try run(
            """
            source: { events: [{ at: 0ms, next: t }, { at: 10ms, next: t }, { at: 20ms, next: t }, { at: 30ms, complete: true }] }
            ops:
              - scanPaginate: { http: { url: "http://api.test/items", paginate: link } }
            sink: record
            """, session)
        XCTAssertEqual(harness.events(), ["0: [1,2]", "10: [1,2,3]", "30: completed"])
    }

    func testScanPaginateFinishesThePageInFlightWhenItsTriggersEnd() throws {
        let harness = try PipelineHarness().run(
            """
            source: { events: [{ at: 0ms, next: 1 }, { at: 20ms, complete: true }] }
            ops:
              - scanPaginate: { events: { marbles: "-a-b|" } }
            sink: record
            """)
        XCTAssertEqual(harness.events(), ["40: [\"a\",\"b\"]", "40: completed"])
    }

    func testScanPaginateIgnoresTriggersWhileAPageLoadsAndCanEmitPages() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              taps:
                source: { events: [{ at: 0ms, next: 2 }, { at: 5ms, next: 9 }, { at: 20ms, next: 0 }, { at: 40ms, next: 1 }, { at: 60ms, complete: true }] }
                ops:
                  - id: pages
                    scanPaginate:
                      source: { events: { timeline: "{{ . == 0 ? [{at: '10ms', complete: true}] : [{at: '10ms', next: .}, {at: '10ms', complete: true}] }}" } }
                      emit: page
            sinks:
              - { stream: taps, record: out }
              - { stream: pages.executing, record: loading }
            """)
        // 9 comes while 2 loads: ignored. 0 gives an empty page: the last, so 1 is ignored too.
        XCTAssertEqual(harness.events(), ["10: [2]", "30: []", "60: completed"])
        XCTAssertEqual(
            harness.events("loading"), ["0: true", "10: false", "20: true", "30: false", "60: completed"])
    }

    func testA503IsRetriedAfterAJitteredBackoff() throws {
        let session = try recording([
            ("/flaky", [:], 503, [:], "{\"message\": \"busy\"}"),
            ("/flaky", [:], 200, [:], "[\"ok\"]"),
        ])
        let harness = try run(
            "source: { http: { url: \"http://api.test/flaky\", retry: { backoff: 100ms } } }\nsink: record\n", session)
        let events = harness.events()
        XCTAssertEqual(events.count, 2, "\(events)")
        let time = Int(events[0].split(separator: ":")[0])!
        XCTAssertTrue((50...100).contains(time), "retried between half and all of the backoff: \(events)")
        XCTAssertTrue(
            harness.logged[0].contains("503 Service Unavailable from GET http://api.test/flaky; attempt 2 of 5"))
    }

    func testRetryAfterAndARateLimitResetAreWaitedOut() throws {
        let date = "Sun, 22 Nov 2026 10:00:00 GMT"
        let reset = String(Int(1_795_341_600 + 3))  // 10:00:03 that day
        let first = try recording([
            ("/a", [:], 429, ["Retry-After": "2"], "{}"),
            ("/a", [:], 200, [:], "[\"a\"]"),
        ])
        let second = try recording([
            (
                "/b", [:], 403, ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset, "Date": date],
                "{\"message\": \"API rate limit exceeded\"}"
            ),
            ("/b", [:], 200, [:], "[\"b\"]"),
        ])
        let a = try run("source: { http: { url: \"http://api.test/a\" } }\nsink: record\n", first)
        XCTAssertEqual(a.events(), ["2000: \"a\"", "2000: completed"])
        let b = try run("source: { http: { url: \"http://api.test/b\" } }\nsink: record\n", second)
        XCTAssertEqual(b.events(), ["4000: \"b\"", "4000: completed"], "the reset, plus a second")
    }

    func testAPermission403AndA422AreNotRetried() throws {
        let session = try recording([
            ("/private", [:], 403, [:], "{\"message\": \"Resource not accessible by integration\"}"),
            ("/private", [:], 200, [:], "[]"),
        ])
        let harness = try run("source: { http: { url: \"http://api.test/private\" } }\nsink: record\n", session)
        XCTAssertEqual(harness.events().count, 1)
        XCTAssertTrue(
            harness.events()[0].contains("403 Forbidden: Resource not accessible by integration"), "\(harness.events())"
        )
    }

    func testARateLimitLongerThanMaxWaitFailsAtOnce() throws {
        let session = try recording([("/slow", [:], 429, ["Retry-After": "3600"], "{}")])
        let harness = try run(
            "source: { http: { url: \"http://api.test/slow\", retry: { maxWait: 1m } } }\nsink: record\n", session)
        XCTAssertEqual(harness.events().count, 1)
        XCTAssertTrue(harness.events()[0].hasPrefix("0: error"), "\(harness.events())")
        XCTAssertTrue(
            harness.events()[0].contains("rate limited for 60m, longer than retry.maxWait"), "\(harness.events())")
    }

    func testGitHubSearchStopsAtTheThousandResultCap() throws {
        var exchanges: [(String, [String: String], Int, [String: String], String)] = []
        for page in 1...12 {
            var query = ["q": "language:swift", "per_page": "100"]
            if page > 1 { query["page"] = String(page) }
            let next =
                "<http://api.test/search/repositories?q=language%3Aswift&per_page=100&page=\(page + 1)>; rel=\"next\""
            exchanges.append(
                ("/search/repositories", query, 200, ["Link": next], "{\"total_count\": 48213, \"items\": [\(page)]}"))
        }
        let harness = try run(
            "source: { github.search: { q: \"language:swift\", perPage: 100, baseURL: \"http://api.test\" } }\nsink: record\n",
            try recording(exchanges))
        XCTAssertEqual(harness.events().count, 11, "ten pages of 100, then completion: \(harness.events())")
    }

    func testNYTStopsAtItsHundredthPageAndNormalizesBothMultimediaShapes() throws {
        func page(_ number: Int) -> String {
            let docs = (0..<10).map { index -> String in
                index == 0
                    ? "{\"headline\": {\"main\": \"p\(number)\"}, \"multimedia\": [{\"subtype\": \"xlarge\", \"url\": \"images/x.jpg\", \"width\": 600, \"height\": 400}]}"
                    : "{\"headline\": {\"main\": \"p\(number)-\(index)\"}, \"multimedia\": {\"default\": {\"url\": \"https://static01.nyt.com/d.jpg\", \"width\": 10, \"height\": 5}}, \"byline\": []}"
            }
            return
                "{\"status\": \"OK\", \"response\": {\"docs\": [\(docs.joined(separator: ","))], \"meta\": {\"hits\": 5000}}}"
        }
        let session = try recording([
            ("/svc/search/v2/articlesearch.json", ["q": "x", "sort": "relevance", "page": "98"], 200, [:], page(98)),
            ("/svc/search/v2/articlesearch.json", ["q": "x", "sort": "relevance", "page": "99"], 200, [:], page(99)),
        ])
        let harness = try run(
            "source: { nyt.search: { q: x, page: 98, baseURL: \"http://api.test\", emit: page } }\nops: [{ map: \"[.[0].image.url, .[1].image.url, .[1].byline, len(.)]\" }]\nsink: record\n",
            session)
        XCTAssertEqual(
            harness.events(),
            [
                "0: [\"https://static01.nyt.com/images/x.jpg\",\"https://static01.nyt.com/d.jpg\",{},10]",
                "0: [\"https://static01.nyt.com/images/x.jpg\",\"https://static01.nyt.com/d.jpg\",{},10]",
                "0: completed",
            ])
    }

    func testFoursquareFollowsTheCursorInTheLinkHeader() throws {
        let session = try recording([
            (
                "/places/search", ["query": "coffee", "limit": "2"], 200,
                [
                    "Link":
                        "<https://places-api.foursquare.com/places/search?query=coffee&limit=2&cursor=c3I6Mg>; rel=\"next\""
                ],
                "{\"results\": [{\"name\": \"A\"}, {\"name\": \"B\"}]}"
            ),
            (
                "/places/search", ["query": "coffee", "limit": "2", "cursor": "c3I6Mg"], 200, [:],
                "{\"results\": [{\"name\": \"C\"}]}"
            ),
        ])
        let harness = try run(
            "source: { foursquare.search: { query: coffee, limit: 2, baseURL: \"http://api.test\" } }\nops: [{ map: .name }]\nsink: record\n",
            session)
        XCTAssertEqual(harness.events(), ["0: \"A\"", "0: \"B\"", "0: \"C\"", "0: completed"])
    }

    func testAReplaySendsNoKeyEvenWhenOneIsSet() throws {
        setenv("NYT_API_KEY", "set-in-the-environment-1", 1)
        defer { unsetenv("NYT_API_KEY") }
        let session = try recording([
            (
                "/svc/search/v2/articlesearch.json", ["q": "x", "sort": "relevance"], 401, [:],
                "{\"fault\": {\"faultstring\": \"Invalid ApiKey\"}}"
            )
        ])
        let harness = try run(
            "source: { nyt.search: { q: x, baseURL: \"http://api.test\" } }\nsink: record\n", session)
        XCTAssertEqual(
            harness.events(),
            [
                "0: error p.yaml:1:11: error: nyt.search: GET http://api.test/svc/search/v2/articlesearch.json?q=x&sort=relevance: 401 Unauthorized: Invalid ApiKey"
            ])
    }

    func testAReplayedPageOverMaxBytesIsRefused() throws {
        let page = "<html><body>" + String(repeating: "<img src=\"a.png\">", count: 100) + "</body></html>"
        let session = try recording([("/page", [:], 200, ["Content-Type": "text/html"], page)])
        let harness = try run(
            "source: { images: { url: \"http://site.test/page\", maxBytes: 1000 } }\nsink: record\n", session)
        XCTAssertEqual(harness.events().count, 1)
        XCTAssertTrue(
            harness.events()[0].contains(
                "the response (\(page.utf8.count) bytes) is larger than the limit of 1000 bytes"),
            "\(harness.events())")
    }
}
