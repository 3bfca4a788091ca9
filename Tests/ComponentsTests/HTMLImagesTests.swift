import Foundation
import RivuletTestSupport
import XCTest

@testable import Components

/// Extraction of a page's images, read from libxml2's events or (with a selector) its tree.
final class HTMLImagesTests: LeakCheckingTestCase {
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

    func testAPictureImageTakesEverySourceOfItsPicture() throws {
        // Sources written after the img count too (pages put them first; browsers read only those).
        // libxml2 does not know `source` as empty: unclosed, the next element would be inside it.
        let page = """
            <picture><source srcset="wide.jpg 900w"></source><img src="small.jpg"><source srcset="late.jpg 2000w"></picture>
            <picture><img src="alone.jpg" alt="a"><source srcset="after.jpg 800w"></picture><img src="plain.jpg">
            """
        let found = try HTMLImages.extract(
            Array(page.utf8), pageURL: "https://s.example/", charset: nil, options: .init())
        XCTAssertEqual(
            found.map(\.url),
            ["https://s.example/late.jpg", "https://s.example/after.jpg", "https://s.example/plain.jpg"])
        XCTAssertEqual(found.map(\.width), [2000, 800, nil])
        XCTAssertEqual(found[1].alt, "a")
    }

    func testASelectorNarrowsTheSearchButTheBaseComesFromTheWholePage() throws {
        let page = """
            <html><head><base href="https://cdn.example/b/"><meta property="og:image" content="og.png"></head>
            <body><img src="out.png"><div class="r"><img src="in.png"><noscript>x</noscript></div></body></html>
            """
        let found = try HTMLImages.extract(
            Array(page.utf8), pageURL: "https://s.example/p", charset: nil, options: .init(selector: "div.r"))
        XCTAssertEqual(found.map(\.url), ["https://cdn.example/b/in.png"], "no meta images with a selector")
        XCTAssertThrowsError(
            try HTMLImages.extract(
                Array(page.utf8), pageURL: "https://s.example/", charset: nil, options: .init(selector: "//[")))
    }

    func testALimitCountsImagesAfterResolutionAndDeduplication() throws {
        let page = #"<img src="a.png"><img src="a.png"><img src="javascript:x()"><img src="b.png"><img src="c.png">"#
        let found = try HTMLImages.extract(
            Array(page.utf8), pageURL: "https://s.example/", charset: nil, options: .init(limit: 2))
        XCTAssertEqual(found.map(\.url), ["https://s.example/a.png", "https://s.example/b.png"])
    }
}
