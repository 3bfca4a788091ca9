import Foundation
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@testable import Components

/// The pieces of the HTTP layer: redaction, API error messages, Link headers, backoff,
/// recordings, NYT's two multimedia shapes.
final class HTTPSupportTests: LeakCheckingTestCase {
    func testSecretsAreRemovedByNameAndByValue() {
        let redactor = SecretRedactor()
        XCTAssertEqual(
            redactor.redact(url: "https://api.test/a?q=x&api-key=k123456&page=2"),
            "https://api.test/a?q=x&api-key=REDACTED&page=2")
        redactor.add("tok/en+42")
        XCTAssertEqual(redactor.redact("Bearer tok/en+42 and tok%2Fen%2B42"), "Bearer REDACTED and REDACTED")
        redactor.add("ab")  // too short to be a secret; would mangle text
        XCTAssertEqual(redactor.redact("abc"), "abc")
        XCTAssertTrue(SecretRedactor.isSecretHeader("Authorization"))
        XCTAssertFalse(SecretRedactor.isSecretHeader("Accept"))
    }

    func testTheAPIsOwnErrorMessagesAreFound() {
        func message(_ json: String) -> String? { HTTPBody.apiMessage(Array(json.utf8)) }
        XCTAssertEqual(message("{\"message\": \"Not Found\", \"documentation_url\": \"x\"}"), "Not Found")
        XCTAssertEqual(
            message(
                "{\"message\": \"Validation Failed\", \"errors\": [{\"resource\": \"Search\", \"code\": \"missing\"}]}"),
            "Validation Failed (missing)")
        XCTAssertEqual(message("{\"fault\": {\"faultstring\": \"Invalid ApiKey\"}}"), "Invalid ApiKey")
        XCTAssertEqual(message("{\"meta\": {\"code\": 403, \"errorDetail\": \"Quota exceeded\"}}"), "Quota exceeded")
        XCTAssertNil(message("<html>"))
        XCTAssertEqual(HTTPBody.preview(Array("line one\nline two".utf8), limit: 8), "17 bytes starting \"line one…\"")
        XCTAssertEqual(HTTPBody.preview([]), "an empty body")
    }

    func testTheNextLinkIsFoundAndResolved() {
        let github =
            "<https://api.github.com/search/repositories?q=a&page=2>; rel=\"next\", <https://api.github.com/search/repositories?q=a&page=34>; rel=\"last\""
        XCTAssertEqual(
            PagedFetch.nextLink(github, base: "https://api.github.com/x"),
            "https://api.github.com/search/repositories?q=a&page=2")
        XCTAssertEqual(
            PagedFetch.nextLink("</items?page=3>; rel=\"next\"", base: "http://127.0.0.1:9/items?page=2"),
            "http://127.0.0.1:9/items?page=3")
        XCTAssertNil(
            PagedFetch.nextLink(
                "<https://x/?page=1>; rel=\"prev\", <https://x/?page=1>; rel=\"first\"", base: "https://x/"))
        XCTAssertNil(PagedFetch.nextLink(nil, base: "https://x/"))
        XCTAssertEqual(
            PagedFetch.setting("page", to: "3", in: "https://x/a?page=2&q=b"), "https://x/a?q=b&page=3")
    }

    func testBackoffDoublesIsJitteredAndCapped() {
        var policy = RetryPolicy()
        policy.backoff = .milliseconds(100)
        policy.maxBackoff = .milliseconds(500)
        var random = SeededRandom(seed: 7)
        for retry in 0..<6 {
            let full = min(100 * (1 << retry), 500)
            let wait = Int(policy.backoff(retry: retry, random: &random).totalNanoseconds / 1_000_000)
            XCTAssertTrue((full / 2...full).contains(wait), "retry \(retry): \(wait) ms, full \(full)")
        }
    }

    func testARecordingKeepsNoSecretAndReadsBack() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let redactor = SecretRedactor()
        redactor.add("s3cr3t-key")
        let recording = HTTPRecording(path: path, redactor: redactor)
        recording.append(
            request: HTTPRequestData(
                url: "https://api.test/a?q=x&api-key=s3cr3t-key",
                headers: [("Authorization", "Bearer s3cr3t-key"), ("Accept", "application/json")]),
            response: HTTPResponseData(
                status: 200,
                headers: [
                    ("Content-Length", "9"), ("Link", "<https://api.test/a?key=s3cr3t-key&page=2>; rel=\"next\""),
                ],
                body: Array("{\"echo\": \"s3cr3t-key\"}".utf8), url: "https://api.test/a"))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertFalse(text.contains("s3cr3t-key"), text)
        XCTAssertFalse(text.lowercased().contains("content-length"), "connection headers are dropped")
        let exchanges = try HTTPRecording.load(path: path)
        XCTAssertEqual(exchanges.count, 1)
        XCTAssertTrue(exchanges[0].matches(HTTPRequestData(url: "https://elsewhere/a?api-key=other&q=x")))
        XCTAssertFalse(exchanges[0].matches(HTTPRequestData(url: "https://elsewhere/a?q=y")))
        XCTAssertEqual(String(decoding: exchanges[0].response.body, as: UTF8.self), "{\"echo\":\"REDACTED\"}")
    }

    func testBothShapesOfNYTMultimediaGiveOneImageField() throws {
        let legacy = try JSONParser.parse(
            Array(
                "{\"multimedia\": [{\"subtype\": \"thumb\", \"url\": \"images/t.jpg\"}, {\"subtype\": \"xlarge\", \"url\": \"images/x.jpg\", \"width\": 600, \"height\": 400}]}"
                    .utf8))
        XCTAssertEqual(
            NYTArticleSearch.normalize(legacy)["image"],
            try JSONParser.parse(
                Array("{\"url\": \"https://static01.nyt.com/images/x.jpg\", \"width\": 600, \"height\": 400}".utf8)))
        let current = try JSONParser.parse(
            Array(
                "{\"multimedia\": {\"default\": {\"url\": \"https://static01.nyt.com/d.jpg\", \"width\": 1, \"height\": 2}}}"
                    .utf8))
        XCTAssertEqual(NYTArticleSearch.normalize(current)["image"]?["url"], .string("https://static01.nyt.com/d.jpg"))
        for empty in ["{\"multimedia\": []}", "{\"multimedia\": null}", "{}"] {
            XCTAssertEqual(NYTArticleSearch.normalize(try JSONParser.parse(Array(empty.utf8)))["image"], .null, empty)
        }
    }
}
