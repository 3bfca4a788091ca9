import Foundation
import RivuletTestSupport
import XCTest

@testable import Components

/// Resolving images' references against a page's base: the shortcut for plain relative paths
/// agrees with Foundation's URL parser; only http(s) URLs are kept, once each.
final class ImageResolverTests: LeakCheckingTestCase {
    func testPlainRelativePathsResolveAsTheURLParserResolvesThem() {
        let references = [
            "a.png", "img/b-1.png", "x_y~z.jpg", "deep/er/c.gif", "./d.png", "../e.png", "f/../g.png", "/h.png",
            "i.png?x=1", "j%20k.png", "dot.file.png", ".hidden.png", "a//b.png", "https://other.test/l.png",
            "m.png#frag",
        ]
        for page in [
            "https://example.test/a/b/page.html", "https://example.test", "http://example.test/dir/",
            "https://example.test/a/./b/p.html", "https://example.test/q/page.html?query=1",
        ] {
            let base = URL(string: page)
            var resolver = ImageResolver(base: base, options: .init(), expected: references.count)
            var expected: [String] = []
            for reference in references {
                resolver.add(reference, alt: nil, width: nil, height: nil)
                guard var url = URL(string: reference, relativeTo: base)?.absoluteURL.absoluteString else { continue }
                if url.hasSuffix("#") { url.removeLast() }
                if !expected.contains(url) { expected.append(url) }
            }
            XCTAssertEqual(resolver.found.map(\.url), expected, page)
        }
    }

    func testOnlyWebURLsAreKeptOnceAndUpToTheLimit() {
        var resolver = ImageResolver(
            base: URL(string: "https://s.example/d/"), options: .init(includeData: false, limit: 3), expected: 8)
        for reference in [
            "javascript:void(0)", "data:image/png;base64,AA", "ftp://x/y.png", "a.png", "./a.png", "b.png#", "c.png",
            "d.png",
        ] {
            resolver.add(reference, alt: reference, width: 1, height: nil)
        }
        XCTAssertEqual(
            resolver.found.map(\.url),
            ["https://s.example/d/a.png", "https://s.example/d/b.png", "https://s.example/d/c.png"])
        XCTAssertEqual(resolver.found.first?.alt, "a.png")
        XCTAssertTrue(resolver.isFull)
        var withData = ImageResolver(base: nil, options: .init(includeData: true), expected: 1)
        withData.add("data:image/png;base64,AA", alt: nil, width: nil, height: nil)
        XCTAssertEqual(withData.found.map(\.url), ["data:image/png;base64,AA"])
    }
}
