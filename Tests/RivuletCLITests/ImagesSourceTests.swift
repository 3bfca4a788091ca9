import BinaryTestSupport
import Foundation
import HTTPTestServer
import RivuletTestSupport
import XCTest

/// The `images` source through the binary, against pages served on 127.0.0.1.
final class ImagesSourceTests: BinaryTestCase {
    private static func html(_ text: String, type: String = "text/html; charset=utf-8") -> TestHTTPServer.Reply {
        .respond(status: 200, headers: [("Content-Type", type)], body: Array(text.utf8))
    }

    /// Serves `pages` by path; anything else is a 404.
    private func serve(_ pages: [String: TestHTTPServer.Reply]) throws -> TestHTTPServer {
        try serve { request, _ in pages[request.path] ?? .respond(status: 404, body: Array("not found".utf8)) }
    }

    /// Runs `images` with `parameters` and returns the elements as objects, or the failure.
    private func images(_ parameters: String) throws -> (objects: [[String: Any]], result: ProcessResult) {
        let result = try run("source: { images: { \(parameters) } }\nsink: stdout\n")
        let objects = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (objects, result)
    }

    private static let gallery = """
        <!DOCTYPE html>
        <html><head><title>Gallery</title><meta property="og:image" content="/og.png"></head>
        <body>
          <img src="a.png" alt="relative">
          <img src="/root.png" alt="root-relative">
          <img src="//cdn.example/x.png" alt="protocol-relative">
          <img src="../up.png">
          <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="lazy.jpg" alt="lazy">
          <img src="s-100.jpg" srcset="s-100.jpg 100w, s-800.jpg 800w, s-400.jpg 400w" alt="by width">
          <img srcset="https://cdn.example/w_100,h_100/one.jpg 1x, https://cdn.example/w_200,h_200/two.jpg 2x">
          <picture><source srcset="p-1200.webp 1200w, p-600.webp 600w"><img src="p.jpg" alt="picture"></picture>
          <noscript><img src="nos.jpg" alt="noscript"></noscript>
          <img src="a.png" alt="duplicate">
          <img src="q.png?a=1&amp;b=2" width="40" height="30px">
          <img src="">
          <img src="data:image/png;base64,AAAA">
        </body></html>
        """

    func testEveryKindOfImageIsFoundResolvedAgainstTheFinalURLAndDeduplicated() throws {
        let server = try serve([
            "/start": .respond(status: 301, headers: [("Location", "/gallery/page.html")]),
            "/gallery/page.html": Self.html(Self.gallery),
        ])
        let (found, result) = try images("url: \"\(server.baseURL)/start\"")
        XCTAssertEqual(result.status, 0, result.stderr)
        let base = server.baseURL
        XCTAssertEqual(
            found.map { $0["url"] as? String },
            [
                "\(base)/gallery/a.png", "\(base)/root.png", "http://cdn.example/x.png", "\(base)/up.png",
                "\(base)/gallery/lazy.jpg", "\(base)/gallery/s-800.jpg", "https://cdn.example/w_200,h_200/two.jpg",
                "\(base)/gallery/p-1200.webp", "\(base)/gallery/nos.jpg", "\(base)/gallery/q.png?a=1&b=2",
                "\(base)/og.png",
            ])
        XCTAssertEqual(found[0]["alt"] as? String, "relative")
        XCTAssertEqual(found[4]["alt"] as? String, "lazy")
        XCTAssertEqual(found[5]["width"] as? Int, 800)
        XCTAssertEqual(found[9]["width"] as? Int, 40)
        XCTAssertEqual(found[9]["height"] as? Int, 30)
        XCTAssertEqual(found[0]["page"] as? String, "\(base)/gallery/page.html", "the page after the redirect")
    }

    func testBaseHrefSelectorLimitAndDataURLs() throws {
        let server = try serve([
            "/based.html": Self.html(
                "<html><head><base href=\"https://static.example/base/\"></head><body><img src=\"b.png\"></body></html>"
            ),
            "/results.html": Self.html(
                """
                <html><body><header><img src="logo.png"></header>
                <div class="results main"><a><img src="r1.jpg"></a><img src="r2.jpg"><img src="r3.jpg"></div>
                <div id="ads"><img src="ad.jpg"></div><img src="data:image/png;base64,AAAA"></body></html>
                """),
        ])
        XCTAssertEqual(
            try images("url: \"\(server.baseURL)/based.html\"").objects.map { $0["url"] as? String },
            ["https://static.example/base/b.png"])
        let css = try images("url: \"\(server.baseURL)/results.html\", selector: \"div.results img\", limit: 2")
        XCTAssertEqual(
            css.objects.map { $0["url"] as? String }, ["\(server.baseURL)/r1.jpg", "\(server.baseURL)/r2.jpg"])
        let xpath = try images("url: \"\(server.baseURL)/results.html\", selector: \"//div[@id='ads']\"")
        XCTAssertEqual(xpath.objects.map { $0["url"] as? String }, ["\(server.baseURL)/ad.jpg"])
        let data = try images("url: \"\(server.baseURL)/results.html\", includeData: true")
        XCTAssertEqual(data.objects.last?["url"] as? String, "data:image/png;base64,AAAA")
        let bad = try images("url: \"\(server.baseURL)/results.html\", selector: \"div > img\"")
        XCTAssertEqual(bad.result.status, 2)
        assertContains(bad.result.stderr, "'>' is not supported")
    }

    func testShiftJISAndEUCJPPagesAreDecoded() throws {
        // 東京の夜景 in Shift_JIS; 大阪城 in EUC-JP.
        let tokyo: [UInt8] = [0x93, 0x8C, 0x8B, 0x9E, 0x82, 0xCC, 0x96, 0xE9, 0x8C, 0x69]
        let osaka: [UInt8] = [0xC2, 0xE7, 0xBA, 0xE5, 0xBE, 0xEB]
        let shiftJIS = Array("<html><body><img src=\"tokyo.jpg\" alt=\"".utf8) + tokyo + Array("\"></body></html>".utf8)
        let meta =
            Array("<html><head><meta charset=\"Shift_JIS\"></head><body><img src=\"t.jpg\" alt=\"".utf8) + tokyo
            + Array("\"></body></html>".utf8)
        let euc =
            Array(
                "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=EUC-JP\"></head><body><img src=\"osaka.jpg\" alt=\""
                    .utf8) + osaka + Array("\"></body></html>".utf8)
        let server = try serve([
            "/sjis.html": .respond(
                status: 200, headers: [("Content-Type", "text/html; charset=Shift_JIS")], body: shiftJIS),
            "/meta.html": .respond(status: 200, headers: [("Content-Type", "text/html")], body: meta),
            "/euc.html": .respond(status: 200, headers: [("Content-Type", "text/html")], body: euc),
        ])
        XCTAssertEqual(try images("url: \"\(server.baseURL)/sjis.html\"").objects.first?["alt"] as? String, "東京の夜景")
        XCTAssertEqual(try images("url: \"\(server.baseURL)/meta.html\"").objects.first?["alt"] as? String, "東京の夜景")
        XCTAssertEqual(try images("url: \"\(server.baseURL)/euc.html\"").objects.first?["alt"] as? String, "大阪城")
    }

    func testBytesTheCharsetCannotDecodeLeaveNoLibxml2MessagesOnStandardError() throws {
        // 0x80 0x20 is no Shift_JIS character: libxml2 reports it on its own stderr handler.
        let page =
            Array(#"<html><body><img src="before.png"><p>"#.utf8) + [0x81, 0x20, 0xFF]
            + Array("</p></body></html>".utf8)
        let server = try serve([
            "/bad.html": .respond(status: 200, headers: [("Content-Type", "text/html; charset=Shift_JIS")], body: page)
        ])
        let (found, result) = try images("url: \"\(server.baseURL)/bad.html\"")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(found.map { $0["url"] as? String }, ["\(server.baseURL)/before.png"])
        for message in ["encoding error", "I/O error", "XPath error"] {
            XCTAssertFalse(result.stderr.contains(message), result.stderr)
        }
    }

    func testATruncatedBadlyNestedPageStillGivesTheImagesBeforeTheBreak() throws {
        let server = try serve([
            "/broken.html": Self.html(
                "<div><p><img src=\"1.png\"><table><tr><td><IMG SRC=2.png></div></td><span><img src=\"3.png\" alt=\"after\"><b><img src=\"4.pn"
            )
        ])
        let (found, result) = try images("url: \"\(server.baseURL)/broken.html\"")
        XCTAssertEqual(result.status, 0, result.stderr)
        let urls = found.compactMap { $0["url"] as? String }
        XCTAssertEqual(Array(urls.prefix(3)), ["1.png", "2.png", "3.png"].map { "\(server.baseURL)/\($0)" })
    }

    func testAPageOverTheLimitAndANonHTMLResponseAreClearErrors() throws {
        let big =
            "<html><body>"
            + String(repeating: "<p><img src=\"x.png\"> filler text for a big page</p>\n", count: 200_000)
        XCTAssertGreaterThan(big.utf8.count, 10_000_000)
        let server = try serve([
            "/big.html": Self.html(big),
            "/api": .respond(
                status: 200, headers: [("Content-Type", "application/json")], body: Array("{\"images\": []}".utf8)),
        ])
        let tooBig = try images("url: \"\(server.baseURL)/big.html\"")
        XCTAssertEqual(tooBig.result.status, 1)
        assertContains(tooBig.result.stderr, "is larger than the limit of 5242880 bytes")
        let raised = try images("url: \"\(server.baseURL)/big.html\", maxBytes: 20000000, limit: 1")
        XCTAssertEqual(raised.result.status, 0, raised.result.stderr)
        XCTAssertEqual(raised.objects.count, 1)
        let json = try images("url: \"\(server.baseURL)/api\"")
        XCTAssertEqual(json.result.status, 1)
        assertContains(
            json.result.stderr,
            "not an HTML page (content-type: application/json): 14 bytes starting \"{\"images\": []}\"")
    }
}
