import CLibXML2
import Foundation

/// An element's attributes as the parser hands them over: SAX's name/value array, or a tree node's
/// list. Values point into the parser's memory and last as long as the start-tag event.
enum MarkupAttributes {
    case parsed(UnsafeMutablePointer<UnsafePointer<xmlChar>?>?)
    case node(xmlNodePtr)

    private static var empty: UnsafePointer<xmlChar> { ("" as StaticString).utf8Start }

    /// Calls `body` with each attribute's name and value ("" for one written without a value).
    func each(_ body: (UnsafePointer<xmlChar>, UnsafePointer<xmlChar>) -> Void) {
        switch self {
        case .parsed(let pairs):
            guard let pairs else { return }
            var index = 0
            while let name = pairs[index] {
                body(name, pairs[index + 1] ?? Self.empty)
                index += 2
            }
        case .node(let node):
            var attribute = node.pointee.properties
            while let current = attribute {
                // libxml2's HTML tree holds a value as one text node (none when written without one).
                body(current.pointee.name, UnsafePointer(current.pointee.children?.pointee.content) ?? Self.empty)
                attribute = current.pointee.next
            }
        }
    }

    /// The value of the attribute `name`, if the element has it.
    func value(_ name: StaticString) -> UnsafePointer<xmlChar>? {
        var found: UnsafePointer<xmlChar>?
        each { own, value in
            if found == nil, ImageScanner.equal(own, name) { found = value }
        }
        return found
    }
}

/// Finds images in a page's parse events, in document order: `img` (src, lazy-loading attributes,
/// srcset), `picture > source`, `noscript` content, `og:image`/`twitter:image`, with `<base href>`.
/// A state machine over start tag / end tag / text, so one logic serves a page read without a
/// tree and the nodes a selector picked from one.
struct ImageScanner {
    let options: HTMLImages.Options
    /// Off while a page is read only for its `<base>` (before the nodes a selector picked).
    var collectsImages = true

    /// A chosen image, resolved against the base once the page is read (a `<base>` may come late).
    private struct Reference {
        var url: String
        var alt: String?
        var width: Int?
        var height: Int?
    }
    /// In document order; nil where an image in a picture waits for the picture's end.
    private var references: [Reference?] = []

    /// Where the events are: the depth of the next element in libxml2's tree (the root is 0), and
    /// the elements the parser has open.
    private var depth = 0
    private var parserDepth = 0
    /// libxml2's tree holds one root: an element the parser starts after the root ended becomes
    /// the root's child when the root is the document's first node, else a node of its own,
    /// which is not searched (`ignoredDepth` counts its open elements).
    private var rootStarted = false
    private var nodesBeforeRoot = false
    private var rootIsFirstNode = false
    private var ignoredDepth = 0
    /// libxml2's tree builder stops the parse at an element when it already holds this many open
    /// (without XML_PARSE_HUGE): the page ends there for the tree, so it does for the scanner
    /// when it reads the parser's events (a tree walked has ended there already).
    static let maximumDepth = 256
    var readsParser = false
    /// Nor does it hold a run of text (one text node) longer than this: the parse stops there too.
    static let maximumTextRun = 10_000_000
    private var halted = false
    /// The length of the run of text the parser is in, and whether it is CDATA (a node of its own).
    private var textRun: (length: Int, isCDATA: Bool)?
    /// The depth of the element whose subtree is not searched (script, style, template, img).
    private var skippedDepth: Int?
    /// Open `picture` elements with the candidates of their `source` children so far, and the
    /// images in them, decided at the picture's end: every source of it is a candidate.
    private var pictures: [(depth: Int, sources: [HTMLImages.Candidate], waiting: [WaitingImage])] = []
    private struct WaitingImage {
        var place: Int
        var attributes: [String?]
    }
    /// Open `noscript` elements: libxml2 keeps one's content as text in `<head>`, parsed apart.
    private var noscripts: [(depth: Int, hasElements: Bool, text: [UInt8])] = []
    /// `<base href>` and meta images: those of the first `head` child of the root when there is
    /// one (libxml2 makes one for anything that belongs there), else of the whole page. Read from
    /// the first page only (a selector's nodes come after the whole page).
    private var pagesBegun = 0
    private var headDepth: Int?
    private var headEnded = false
    private var bases: (head: [String], page: [String]) = ([], [])
    private var metas: (head: [String], page: [String]) = ([], [])

    init(options: HTMLImages.Options) {
        self.options = options
    }

    /// Starts a page (or a selected node read as one): only its first root element counts.
    mutating func beginPage() {
        pagesBegun += 1
        depth = 0
        parserDepth = 0
        rootStarted = false
        nodesBeforeRoot = false
        ignoredDepth = 0
        halted = false
        textRun = nil
        skippedDepth = nil
        pictures = []
        noscripts = []
    }

    /// Ends a page: elements the events left open end here.
    mutating func endPage() {
        halted = false
        ignoredDepth = 0
        while parserDepth > 0 { end() }
    }

    /// A comment or processing instruction.
    mutating func otherNode() {
        textRun = nil
        if !halted && parserDepth == 0 && !rootStarted { nodesBeforeRoot = true }
    }

    /// A `<!DOCTYPE>`: libxml2 puts it first in the document, wherever it was written.
    mutating func documentType() {
        guard !halted else { return }
        if !rootStarted { nodesBeforeRoot = true }
        rootIsFirstNode = false
    }

    mutating func start(_ name: UnsafePointer<xmlChar>, _ attributes: MarkupAttributes) {
        guard !halted else { return }
        textRun = nil
        if readsParser && parserDepth + ignoredDepth > Self.maximumDepth {
            halted = true
            return
        }
        if ignoredDepth > 0 {
            ignoredDepth += 1
            return
        }
        if parserDepth == 0 {
            if !rootStarted {
                rootStarted = true
                rootIsFirstNode = !nodesBeforeRoot
            } else if rootIsFirstNode {
                depth = 1
            } else {
                ignoredDepth = 1
                return
            }
        }
        parserDepth += 1
        defer { depth += 1 }
        // Any element under a noscript means its content is markup, not text.
        if !noscripts.isEmpty { noscripts[noscripts.count - 1].hasElements = true }
        let element = Element(name)
        switch pagesBegun == 1 ? element : .other {
        case .head where depth == 1 && headDepth == nil && !headEnded:
            headDepth = depth
        case .base:
            if let href = attributes.value("href") { remember(String(cString: href), in: &bases) }
        case .meta:
            let key = attributes.value("property") ?? attributes.value("name")
            if let key, Self.isImageMetaKey(String(cString: key).lowercased()),
                let content = attributes.value("content")
            {
                remember(String(cString: content), in: &metas)
            }
        default:
            break
        }
        guard collectsImages, skippedDepth == nil else { return }
        collect(element, attributes)
    }

    /// What an element in the page's body gives the images: an image, a picture's sources, a
    /// noscript's fallback; the content of a script, style or template is skipped.
    private mutating func collect(_ element: Element, _ attributes: MarkupAttributes) {
        switch element {
        case .img:
            image(attributes)
            skippedDepth = depth
        case .script, .style, .template:
            skippedDepth = depth
        case .picture:
            pictures.append((depth, [], []))
        case .source:
            if let picture = pictures.last, picture.depth == depth - 1 {
                let source = ImageAttributes(attributes)
                for slot in ImageAttributes.srcsetSlots {
                    if let srcset = source[slot] {
                        pictures[pictures.count - 1].sources += HTMLImages.parseSrcset(String(cString: srcset))
                    }
                }
            }
        case .noscript:
            noscripts.append((depth, false, []))
        default:
            break
        }
    }

    mutating func end() {
        guard !halted else { return }
        textRun = nil
        if ignoredDepth > 0 {
            ignoredDepth -= 1
            return
        }
        guard parserDepth > 0 else { return }
        parserDepth -= 1
        depth -= 1
        if depth == headDepth {
            headEnded = true
        }
        if depth == skippedDepth { skippedDepth = nil }
        if let picture = pictures.last, picture.depth == depth {
            pictures.removeLast()
            for image in picture.waiting {
                references[image.place] = choose(sources: picture.sources) { image.attributes[$0] }
            }
        }
        if let noscript = noscripts.last, noscript.depth == depth {
            noscripts.removeLast()
            if !noscript.hasElements { fragment(noscript.text) }
        }
    }

    /// Text as the parser reports it, in pieces that libxml2's tree joins into one node while
    /// nothing else comes between them (and they are all CDATA or all not).
    mutating func parsedText(_ bytes: UnsafeBufferPointer<UInt8>, isCDATA: Bool) {
        guard !halted, parserDepth + ignoredDepth > 0 else { return }
        if let run = textRun, run.isCDATA == isCDATA {
            guard run.length + bytes.count <= Self.maximumTextRun else {
                halted = true
                return
            }
            textRun = (run.length + bytes.count, isCDATA)
        } else {
            textRun = (bytes.count, isCDATA)
        }
        text(bytes)
    }

    mutating func text(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !halted, ignoredDepth == 0, let noscript = noscripts.last, !noscript.hasElements,
            noscript.depth == depth - 1
        else {
            return
        }
        noscripts[noscripts.count - 1].text += bytes
    }

    /// The images found, resolved against the page's base, de-duplicated, at most `limit`;
    /// then the meta images when `metaImages`.
    func finish(pageURL: String, metaImages: Bool) -> [FoundImage] {
        let page = URL(string: pageURL)
        let hasHead = headDepth != nil
        let base = (hasHead ? bases.head : bases.page).lazy.compactMap {
            URL(string: HTMLImages.trimmed($0), relativeTo: page)?.absoluteURL
        }.first
        var resolver = ImageResolver(base: base ?? page, options: options, expected: references.count)
        for case let reference? in references where !resolver.isFull {
            resolver.add(reference.url, alt: reference.alt, width: reference.width, height: reference.height)
        }
        if metaImages {
            for content in hasHead ? metas.head : metas.page where !resolver.isFull {
                resolver.add(HTMLImages.trimmed(content), alt: nil, width: nil, height: nil)
            }
        }
        return resolver.found
    }

    // MARK: - Elements

    /// The elements the scanner treats apart; the rest are only descended into.
    private enum Element {
        case img, picture, source, noscript, script, style, template, head, base, meta, other

        init(_ name: UnsafePointer<xmlChar>) {
            // The first letter rules out nearly every element without a comparison.
            switch name[0] {
            case UInt8(ascii: "i"): self = ImageScanner.equal(name, "img") ? .img : .other
            case UInt8(ascii: "p"): self = ImageScanner.equal(name, "picture") ? .picture : .other
            case UInt8(ascii: "s"):
                self =
                    ImageScanner.equal(name, "source")
                    ? .source
                    : ImageScanner.equal(name, "script") ? .script : ImageScanner.equal(name, "style") ? .style : .other
            case UInt8(ascii: "n"): self = ImageScanner.equal(name, "noscript") ? .noscript : .other
            case UInt8(ascii: "t"): self = ImageScanner.equal(name, "template") ? .template : .other
            case UInt8(ascii: "h"): self = ImageScanner.equal(name, "head") ? .head : .other
            case UInt8(ascii: "b"): self = ImageScanner.equal(name, "base") ? .base : .other
            case UInt8(ascii: "m"): self = ImageScanner.equal(name, "meta") ? .meta : .other
            default: self = .other
            }
        }
    }

    /// Whether `name` (as libxml2 gives it: lower case) is `wanted`.
    static func equal(_ name: UnsafePointer<xmlChar>, _ wanted: StaticString) -> Bool {
        wanted.withUTF8Buffer { wanted in
            wanted.withMemoryRebound(to: CChar.self) { wanted in
                name.withMemoryRebound(to: CChar.self, capacity: wanted.count + 1) { strcmp($0, wanted.baseAddress!) }
            }
        } == 0
    }

    private static func isImageMetaKey(_ key: String) -> Bool {
        ["og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"].contains(key)
    }

    /// Keeps a `<base>` href or meta image for the head (while in the first head) and the page.
    private func remember(_ value: String, in lists: inout (head: [String], page: [String])) {
        if let headDepth, !headEnded, depth > headDepth { lists.head.append(value) }
        lists.page.append(value)
    }

    // MARK: - Images

    private mutating func image(_ attributes: MarkupAttributes) {
        let image = ImageAttributes(attributes)
        guard !pictures.isEmpty else {
            if let chosen = choose(sources: [], { image[$0].map { String(cString: $0) } }) {
                references.append(chosen)
            }
            return
        }
        // Its attributes are copied: the parser's memory holding them lasts only this event.
        let copied = (0..<ImageAttributes.names.count).map { image[$0].map { String(cString: $0) } }
        pictures[pictures.count - 1].waiting.append(WaitingImage(place: references.count, attributes: copied))
        references.append(nil)
    }

    /// The image an `img` with these attributes (by `ImageAttributes` slot) shows, if any: the
    /// largest srcset candidate (its picture's sources', then its own), else a lazy-loading
    /// attribute, else `src` unless it is a placeholder.
    private func choose(sources: [HTMLImages.Candidate], _ value: (Int) -> String?) -> Reference? {
        var candidates = sources
        for slot in ImageAttributes.srcsetSlots {
            if let srcset = value(slot) { candidates += HTMLImages.parseSrcset(srcset) }
        }
        var width = value(ImageAttributes.width).flatMap(Self.pixels)
        let height = value(ImageAttributes.height).flatMap(Self.pixels)
        var chosen: String?
        if let best = HTMLImages.largest(candidates.filter { !HTMLImages.isPlaceholder($0.url) || options.includeData })
        {
            chosen = best.url
            if width == nil { width = best.width }
        } else if let lazy = ImageAttributes.lazySlots.lazy.compactMap(value).map(HTMLImages.trimmed).first(where: {
            !$0.isEmpty
        }) {
            chosen = lazy
        } else if let src = value(ImageAttributes.src).map(HTMLImages.trimmed), !src.isEmpty,
            !HTMLImages.isPlaceholder(src) || (options.includeData && src.hasPrefix("data:"))
        {
            chosen = src
        }
        guard let chosen else { return nil }
        return Reference(url: chosen, alt: value(ImageAttributes.alt), width: width, height: height)
    }

    private static func pixels(_ text: String) -> Int? {
        let trimmed = HTMLImages.trimmed(text)
        return Int(trimmed.hasSuffix("px") ? String(trimmed.dropLast(2)) : trimmed)
    }

    /// A noscript's text content, parsed as a page of its own (no meta images, the same base).
    private mutating func fragment(_ markup: [UInt8]) {
        guard collectsImages, !markup.isEmpty else { return }
        var inner = ImageScanner(options: options)
        markup.withUnsafeBufferPointer {
            HTMLImages.scan($0, charset: "UTF-8", into: &inner)
        }
        references += inner.references
    }
}

/// The attributes of an `img` that choosing its URL reads, pointing into the parser's memory.
struct ImageAttributes {
    static let names: [StaticString] = [
        "src", "srcset", "data-srcset", "data-lazy-srcset", "width", "height", "alt",
        // Lazy-loading scripts read the real URL from these, most specific first.
        "data-src", "data-original", "data-lazy-src", "data-lazy", "data-url", "data-echo",
    ]
    static let src = 0
    static let srcsetSlots = 1...3
    static let width = 4
    static let height = 5
    static let alt = 6
    static let lazySlots = 7...12

    private var values = InlineArray<13, UnsafePointer<xmlChar>?>(repeating: nil)

    init(_ attributes: MarkupAttributes) {
        attributes.each { name, value in
            guard let slot = Self.slot(of: name), values[slot] == nil else { return }
            values[slot] = value
        }
    }

    subscript(slot: Int) -> UnsafePointer<xmlChar>? { values[slot] }

    private static func slot(of name: UnsafePointer<xmlChar>) -> Int? {
        // Dispatch on the first letter: most attributes of most images are src and alt.
        switch name[0] {
        case UInt8(ascii: "s"):
            return ImageScanner.equal(name, "src") ? 0 : ImageScanner.equal(name, "srcset") ? 1 : nil
        case UInt8(ascii: "a"): return ImageScanner.equal(name, "alt") ? alt : nil
        case UInt8(ascii: "w"): return ImageScanner.equal(name, "width") ? width : nil
        case UInt8(ascii: "h"): return ImageScanner.equal(name, "height") ? height : nil
        case UInt8(ascii: "d"): return names.indices.first { $0 >= 2 && ImageScanner.equal(name, names[$0]) }
        default: return nil
        }
    }
}
