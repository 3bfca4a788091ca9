import RivuletTestSupport
import XCTest

@testable import Components

/// srcset candidates, placeholders and trimming, as choosing an image's URL uses them.
final class ImageCandidatesTests: LeakCheckingTestCase {
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
        for placeholder in [
            "data:image/gif;base64,R0lG", "DATA:x", "/img/blank.gif", "Spacer.GIF", "https://x/a/1x1.png//",
            "/img/placeholder-photo-large.jpg", "PLACEHOLDER.svg", "/p/lazy.gif",
        ] {
            XCTAssertTrue(HTMLImages.isPlaceholder(placeholder), placeholder)
        }
        for image in [
            "/img/photo.jpg", "", "/", "blank.gif.jpg", "/a/transparent.gifx", "x/placehold.png", "Data/a.png",
        ] {
            XCTAssertFalse(HTMLImages.isPlaceholder(image), image)
        }
        // Outside ASCII, the segment is lower-cased as Unicode does it (the Kelvin sign is a "k").
        XCTAssertTrue(HTMLImages.isPlaceholder("/img/BLAN\u{212A}.GIF"))
        XCTAssertFalse(HTMLImages.isPlaceholder("/img/blänk.gif"))
    }

    func testTrimmingRemovesWhiteSpaceAroundOnly() {
        XCTAssertEqual(HTMLImages.trimmed("a.png"), "a.png")
        XCTAssertEqual(HTMLImages.trimmed(" \n\ta b.png\r "), "a b.png")
        XCTAssertEqual(HTMLImages.trimmed("\u{3000}w.png\u{A0}"), "w.png")
        XCTAssertEqual(HTMLImages.trimmed("   "), "")
        XCTAssertEqual(HTMLImages.trimmed(""), "")
    }
}
