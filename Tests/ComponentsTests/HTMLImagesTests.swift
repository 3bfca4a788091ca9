import Foundation
import RivuletTestSupport
import XCTest

@testable import Components

/// The pieces of the images source: srcset, placeholders, the CSS subset, and extraction itself.
final class HTMLImagesTests: LeakCheckingTestCase {
    func testSrcsetCandidatesKeepCommasInURLs() {
        let candidates = HTMLImages.parseSrcset(
            "https://cdn/w_100,h_100/a.jpg 100w, https://cdn/w_300,h_300/b.jpg 300w,c.jpg, d.jpg 2x")
        XCTAssertEqual(
            candidates,
            [
                .init(url: "https://cdn/w_100,h_100/a.jpg", width: 100),
                .init(url: "https://cdn/w_300,h_300/b.jpg", width: 300), .init(url: "c.jpg"),
                .init(url: "d.jpg", density: 2),
            ])
        XCTAssertEqual(HTMLImages.largest(candidates)?.url, "https://cdn/w_300,h_300/b.jpg")
        XCTAssertEqual(
            HTMLImages.largest(HTMLImages.parseSrcset("one.jpg, two.jpg 2x, half.jpg 0.5x"))?.url, "two.jpg")
        XCTAssertTrue(HTMLImages.parseSrcset("  ").isEmpty)
    }

    func testPlaceholdersAreRecognised() {
        XCTAssertTrue(HTMLImages.isPlaceholder("data:image/gif;base64,R0lG"))
        XCTAssertTrue(HTMLImages.isPlaceholder("/img/blank.gif"))
        XCTAssertFalse(HTMLImages.isPlaceholder("/img/photo.jpg"))
    }

    func testTheCSSSubsetBecomesXPath() throws {
        XCTAssertEqual(
            try CSSSelector.xpath("div.results img"),
            "//div[contains(concat(' ', normalize-space(@class), ' '), ' results ')]//img")
        XCTAssertEqual(try CSSSelector.xpath("#main [data-src]"), "//*[@id='main']//*[@data-src]")
        XCTAssertEqual(try CSSSelector.xpath("a[rel=next], img"), "//a[@rel='next'] | //img")
        XCTAssertThrowsError(try CSSSelector.xpath("div > img"))
        XCTAssertThrowsError(try CSSSelector.xpath("img["))
    }

    func testPlainRelativePathsResolveAsTheURLParserResolvesThem() throws {
        let references = [
            "a.png", "img/b-1.png", "x_y~z.jpg", "deep/er/c.gif", "./d.png", "../e.png", "f/../g.png", "/h.png",
            "i.png?x=1", "j%20k.png", "dot.file.png", ".hidden.png", "a//b.png", "https://other.test/l.png",
            "m.png#frag",
        ]
        let markup = "<html><body>" + references.map { "<img src=\"\($0)\">" }.joined() + "</body></html>"
        for page in [
            "https://example.test/a/b/page.html", "https://example.test", "http://example.test/dir/",
            "https://example.test/a/./b/p.html",
            "https://example.test/q/page.html?query=1",
        ] {
            let found = try HTMLImages.extract(Array(markup.utf8), pageURL: page, charset: nil, options: .init())
            let base = URL(string: page)
            var expected: [String] = []
            for reference in references {
                guard var url = URL(string: reference, relativeTo: base)?.absoluteURL.absoluteString else { continue }
                if url.hasSuffix("#") { url.removeLast() }
                if !expected.contains(url) { expected.append(url) }
            }
            XCTAssertEqual(found.map(\.url), expected, page)
        }
    }

    func testExtractionFromMarkup() throws {
        let page = """
            <html><head><meta name="twitter:image" content="https://t.example/card.png"><noscript><img src="head-nos.png"></noscript></head>
            <body><script>var x = '<img src="in-script.png">';</script><img data-lazy-src="l.png" src="/spacer.gif" alt="x"></body></html>
            """
        let found = try HTMLImages.extract(
            Array(page.utf8), pageURL: "https://site.example/dir/p.html", charset: "UTF-8", options: .init())
        XCTAssertEqual(
            found.map(\.url),
            ["https://site.example/dir/head-nos.png", "https://site.example/dir/l.png", "https://t.example/card.png"])
        XCTAssertEqual(try HTMLImages.extract([], pageURL: "https://x/", charset: nil, options: .init()), [])
    }
}
