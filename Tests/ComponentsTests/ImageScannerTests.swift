@_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@testable import Components

/// The scanner reads a page from libxml2's parse events, without the tree; it must find what a walk
/// of libxml2's tree finds, where the tree puts elements the events do not say where to put.
final class ImageScannerTests: LeakCheckingTestCase {
    private func images(_ page: String, charset: String? = nil, options: HTMLImages.Options = .init()) throws
        -> [String]
    {
        try images(bytes: Array(page.utf8), charset: charset, options: options)
    }

    private func images(bytes: [UInt8], charset: String? = nil, options: HTMLImages.Options = .init()) throws
        -> [String]
    {
        let page = String(decoding: bytes, as: UTF8.self)
        let streamed = try HTMLImages.extract(
            bytes, pageURL: "https://s.example/d/p.html", charset: charset, options: options)
        let walked = try HTMLImages.extract(
            bytes, pageURL: "https://s.example/d/p.html", charset: charset, options: options, walkingTree: true)
        XCTAssertEqual(streamed, walked, "events and tree disagree on: \(page)")
        return streamed.map { $0.url.replacingOccurrences(of: "https://s.example/d/", with: "") }
    }

    func testElementsAfterTheRootJoinItUnlessSomethingComesBeforeIt() throws {
        // libxml2 adds an element started after </html> to the document's first node when that is
        // the root; after a DOCTYPE (wherever it was written) or a comment, it stands apart.
        XCTAssertEqual(try images(#"<html><img src="a.png"></html><img src="b.png">"#), ["a.png", "b.png"])
        XCTAssertEqual(try images(#"<!DOCTYPE html><html><img src="a.png"></html><img src="b.png">"#), ["a.png"])
        XCTAssertEqual(try images(#"<!-- c --><html><img src="a.png"></html><img src="b.png">"#), ["a.png"])
        // A DOCTYPE inside the page is text, and the </html> before more content is ignored.
        XCTAssertEqual(
            try images(#"<html><img src="a.png"><!DOCTYPE html></html><img src="b.png">"#), ["a.png", "b.png"])
        XCTAssertEqual(try images(#"<html><img src="a.png"></html><!-- c --><img src="b.png">"#), ["a.png", "b.png"])
    }

    func testThePageEndsWhereLibxml2sTreeStopsGrowing() throws {
        // Without XML_PARSE_HUGE the tree builder stops the parse at an element 257 deep.
        for levels in 250...262 {
            let page =
                "<html><body>" + String(repeating: "<div>", count: levels) + #"<img src="deep.png">"#
                + String(repeating: "</div>", count: levels) + #"<img src="after.png"></body></html>"#
            let found = try images(page)
            XCTAssertEqual(
                found, levels + 2 <= ImageScanner.maximumDepth ? ["deep.png", "after.png"] : [], "\(levels)")
            // After the root ended, what follows joins it: one level deeper in the tree than open.
            _ = try images("<html></html>" + String(repeating: "<div>", count: levels) + #"<img src="d.png">"#)
        }
    }

    func testThePageEndsAtARunOfTextTooLongForLibxml2sTree() throws {
        // The tree builder stops the parse where one text node would pass 10,000,000 bytes.
        for length in [ImageScanner.maximumTextRun, ImageScanner.maximumTextRun + 1] {
            let page = "<p>" + String(repeating: "x", count: length) + #"</p><img src="after.png">"#
            XCTAssertEqual(try images(page), length <= ImageScanner.maximumTextRun ? ["after.png"] : [], "\(length)")
        }
        // Text broken by an element or a comment is two nodes.
        let half = String(repeating: "x", count: ImageScanner.maximumTextRun / 2 + 1)
        XCTAssertEqual(try images("<p>\(half)<!-- c -->\(half)</p><img src=\"a.png\">"), ["a.png"])
        XCTAssertEqual(try images("<p>\(half)<b></b>\(half)</p><img src=\"b.png\">"), ["b.png"])
    }

    func testANamespacePrefixIsNotPartOfTheElementsName() throws {
        // libxml2's tree names `<x:script>` "script" (prefix apart), so it is skipped like one.
        XCTAssertEqual(
            try images(#"<x:img src="a.png"><x:script><img src="s.png"></x:script><a:b:img src="b.png">"#), ["a.png"])
    }

    func testNoscriptTextInTheHeadIsParsedAsMarkup() throws {
        let page = """
            <html><head><noscript><img src="head.png"></noscript></head>
            <body><noscript><img src="body.png"></noscript><noscript>&lt;img src="text.png"&gt;</noscript></body></html>
            """
        XCTAssertEqual(try images(page), ["head.png", "body.png", "text.png"])
    }

    func testScriptsStylesAndTemplatesAreSkipped() throws {
        let page = """
            <script>document.write('<img src="s.png">')</script><style>x{background:url(st.png)}</style>
            <template><img src="t.png"><picture><img src="tp.png"></picture></template><img src="kept.png">
            """
        XCTAssertEqual(try images(page), ["kept.png"])
    }

    func testBaseAndMetaComeFromTheHeadWhenThereIsOne() throws {
        let headed = """
            <html><head><title>t</title><base href="https://cdn.example/b/"><meta name="twitter:image" content=" m.png "></head>
            <body><base href="https://late.example/"><meta property="og:image" content="body.png"><img src="i.png"></body></html>
            """
        XCTAssertEqual(
            try images(headed).map { $0.replacingOccurrences(of: "https://cdn.example/b/", with: "cdn:") },
            ["cdn:i.png", "cdn:m.png"])
        // Without a head (libxml2 makes one for anything that belongs there), the whole page counts.
        let headless = #"<body><img src="i.png"><div><meta property="og:image" content="/og.png"></div></body>"#
        XCTAssertEqual(try images(headless), ["i.png", "https://s.example/og.png"])
    }

    func testPicturesPassTheirSourcesDown() throws {
        let page = """
            <picture><source srcset="outer.jpg 500w"><div><img src="nested.jpg"></div>
            <picture><source data-srcset="inner.jpg 2x"><img src="i.jpg"></picture><img src="o2.jpg"></picture>
            """
        XCTAssertEqual(try images(page), ["outer.jpg", "inner.jpg"])
    }

    func testACharsetGivenIsKeptOverThePagesOwn() throws {
        let page = Array(#"<meta charset="shift_jis"><img src=""#.utf8) + [0x82, 0xA0] + Array(#".png">"#.utf8)
        XCTAssertEqual(try images(bytes: page), ["%E3%81%82.png"], "Shift_JIS あ from the page's meta")
        XCTAssertEqual(try images(#"<meta charset="shift_jis"><img src="é.png">"#, charset: "utf-8"), ["%C3%A9.png"])
        XCTAssertEqual(try images(#"<img src="é.png">"#), ["%C3%A9.png"], "UTF-8 when nothing says")
    }

    func testEventsAndTreeAgreeOnGeneratedPages() throws {
        // Broken markup of the kinds pages have, from a fixed seed; the fuzz target does the same at random.
        var random = SeededRandom(seed: 18)
        let tags = [
            "img", "picture", "source", "noscript", "script", "style", "template", "head", "base", "meta", "div", "p",
            "html", "body", "table", "tr", "td", "a", "title", "span", "li", "br", "frameset", "textarea", "select",
        ]
        let names = [
            "src", "srcset", "data-src", "data-srcset", "data-lazy-src", "alt", "width", "height", "href", "property",
            "name", "content", "data-original", "data-lazy-srcset",
        ]
        let values = [
            "a.png", "b.jpg 100w, c.jpg 300w", "/blank.gif", "data:image/gif;base64,AA", "", " x.png ",
            "https://o.example/z.png", "og:image", "twitter:image", "40px", "../up.png", "q.png?x=1",
            "javascript:f()", "d.png 2x, e.png 3x", "https://b.example/base/", "&amp;x.png", "\u{3000}w.png",
        ]
        let loose = [
            "text", " ", "&lt;img src=\"n.png\"&gt;", "<!-- c -->", "<![CDATA[x]]>", "\n", "</html>", "<!DOCTYPE html>",
            "<?pi x?>", "</body>", "<noscript><img src=\"ns.png\"></noscript>",
        ]
        for round in 0..<1500 {
            var page = ""
            for _ in 0..<Int.random(in: 1...40, using: &random) {
                switch Int.random(in: 0..<9, using: &random) {
                case 0..<5:
                    page += "<" + tags.randomElement(using: &random)!
                    for _ in 0..<Int.random(in: 0...3, using: &random) {
                        page += " \(names.randomElement(using: &random)!)=\"\(values.randomElement(using: &random)!)\""
                    }
                    page += ">"
                case 5..<7: page += "</\(tags.randomElement(using: &random)!)>"
                default: page += loose.randomElement(using: &random)!
                }
            }
            let options = [
                HTMLImages.Options(), HTMLImages.Options(includeData: true, limit: 3),
                HTMLImages.Options(selector: "div img, picture"),
            ][round % 3]
            _ = try images(page, charset: round % 4 == 0 ? "shift_jis" : nil, options: options)
        }
    }
}
