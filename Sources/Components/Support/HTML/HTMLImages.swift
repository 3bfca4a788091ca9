import CLibXML2
import Foundation
@_spi(Host) import Pipeline

/// An image found on a page.
struct FoundImage: Equatable {
    /// Its absolute URL.
    var url: String
    /// Its `alt` text, if any.
    var alt: String?
    /// Its width and height, from attributes or a `w` descriptor, if known.
    var width: Int?
    var height: Int?
}

/// A page that cannot be searched for images.
struct HTMLImageError: Error, CustomStringConvertible {
    let description: String
}

extension String {
    fileprivate var trimmedHTML: String { String(trimming(\.isWhitespace)) }
}

/// Finds the images of an HTML page with libxml2's HTML parser in recovery mode, so broken real
/// pages still give the images before the break.
enum HTMLImages {
    struct Options {
        /// Keep `data:` URLs.
        var includeData = false
        /// Only images inside what this selects (XPath, or a small CSS subset).
        var selector: String?
        /// Stop after this many.
        var limit: Int?
    }

    /// Attributes lazy-loading scripts read the real URL from, most specific first.
    static let lazyAttributes = ["data-src", "data-original", "data-lazy-src", "data-lazy", "data-url", "data-echo"]
    static let lazySrcsetAttributes = ["data-srcset", "data-lazy-srcset"]

    /// The images of `body`, a page fetched from `pageURL`, in document order, de-duplicated.
    /// `charset` is the Content-Type's; without it libxml2 reads the page's own `<meta charset>`.
    static func extract(_ body: [UInt8], pageURL: String, charset: String?, options: Options) throws -> [FoundImage] {
        let parsingOptions = Int32(
            HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
                | HTML_PARSE_NONET.rawValue | HTML_PARSE_COMPACT.rawValue)
        guard !body.isEmpty else { return [] }
        let document: htmlDocPtr? = body.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                htmlReadMemory($0, Int32(buffer.count), pageURL, charset, parsingOptions)
            }
        }
        guard let document else { return [] }
        defer { xmlFreeDoc(document) }
        var collector = Collector(pageURL: pageURL, options: options)
        guard let root = xmlDocGetRootElement(document) else { return [] }
        collector.base = baseURL(root, pageURL: pageURL)
        if let selector = options.selector {
            for node in try select(selector, in: document) { collector.walk(node) }
        } else {
            collector.walk(root)
            collector.metaImages(root)
        }
        return collector.found
    }

    /// The `<base href>`, resolved against the page, or the page's own URL.
    private static func baseURL(_ root: xmlNodePtr, pageURL: String) -> URL? {
        let page = URL(string: pageURL)
        let start = head(root) ?? root
        var node: xmlNodePtr? = start
        while let current = node {
            if isElement(current, "base"), let href = attribute(current, "href"),
                let resolved = URL(string: href.trimmedHTML, relativeTo: page)?.absoluteURL
            {
                return resolved
            }
            node = following(current, within: start)
        }
        return page
    }

    /// The `head` element (libxml2 makes one for anything that belongs there), where `<base>`
    /// and meta images are looked for, so a big body is not walked twice more.
    static func head(_ root: xmlNodePtr) -> xmlNodePtr? {
        var child = root.pointee.children
        while let current = child {
            if isElement(current, "head") { return current }
            child = current.pointee.next
        }
        return nil
    }

    /// The nodes `selector` picks: XPath when it starts with `/` or `(`, else CSS.
    static func select(_ selector: String, in document: htmlDocPtr) throws -> [xmlNodePtr] {
        let xpath = selector.hasPrefix("/") || selector.hasPrefix("(") ? selector : try CSSSelector.xpath(selector)
        guard let context = xmlXPathNewContext(document) else { return [] }
        defer { xmlXPathFreeContext(context) }
        guard let result = xmlXPathEvalExpression(xpath, context) else {
            throw HTMLImageError(description: "selector '\(selector)' is not a valid XPath expression")
        }
        defer { xmlXPathFreeObject(result) }
        guard let set = result.pointee.nodesetval else { return [] }
        return (0..<Int(set.pointee.nodeNr)).compactMap { set.pointee.nodeTab[$0] }
    }

    static func name(_ node: xmlNodePtr) -> String {
        node.pointee.name.map { String(cString: $0) }?.lowercased() ?? ""
    }

    /// Whether `node` is an element named `name` (lower case), compared in place: the walk asks
    /// this of every node of the page, so it allocates nothing.
    static func isElement(_ node: xmlNodePtr, _ name: StaticString) -> Bool {
        guard node.pointee.type == XML_ELEMENT_NODE, let own = node.pointee.name else { return false }
        // The first letter rules out nearly every element without a call.
        guard own.pointee | 0x20 == name.utf8Start.pointee else { return false }
        return name.withUTF8Buffer { wanted in
            wanted.withMemoryRebound(to: xmlChar.self) { xmlStrcasecmp(own, $0.baseAddress) == 0 }
        }
    }

    /// The next node of a depth-first walk of `root`'s subtree after `node` (children first), or nil.
    static func following(_ node: xmlNodePtr, within root: xmlNodePtr, descending: Bool = true) -> xmlNodePtr? {
        if descending, let child = node.pointee.children { return child }
        var current = node
        while current != root {
            if let next = current.pointee.next { return next }
            guard let parent = current.pointee.parent else { return nil }
            current = parent
        }
        return nil
    }

    static func attribute(_ node: xmlNodePtr, _ name: String) -> String? {
        guard let value = xmlGetProp(node, name) else { return nil }
        defer { rivulet_xml_free(value) }
        return String(cString: value)
    }

    /// One `srcset` candidate.
    struct Candidate: Equatable {
        var url: String
        var width: Int?
        var density: Double?
    }

    /// Parses a `srcset` the way the HTML standard does, so URLs with commas in them survive.
    static func parseSrcset(_ text: String) -> [Candidate] {
        var candidates: [Candidate] = []
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            while index < characters.count && (characters[index].isWhitespace || characters[index] == ",") {
                index += 1
            }
            guard index < characters.count else { break }
            var url = ""
            while index < characters.count && !characters[index].isWhitespace {
                url.append(characters[index])
                index += 1
            }
            var descriptor = ""
            if url.hasSuffix(",") {
                while url.hasSuffix(",") { url.removeLast() }
            } else {
                var depth = 0
                while index < characters.count {
                    let character = characters[index]
                    if character == "(" { depth += 1 }
                    if character == ")" { depth = max(0, depth - 1) }
                    if character == "," && depth == 0 { break }
                    descriptor.append(character)
                    index += 1
                }
            }
            var candidate = Candidate(url: url)
            for token in descriptor.split(whereSeparator: \.isWhitespace) {
                if token.hasSuffix("w"), let width = Int(token.dropLast()) { candidate.width = width }
                if token.hasSuffix("x"), let density = Double(token.dropLast()) { candidate.density = density }
            }
            if !url.isEmpty { candidates.append(candidate) }
        }
        return candidates
    }

    /// The largest candidate: by width when any has one, else by density (no descriptor is 1x).
    static func largest(_ candidates: [Candidate]) -> Candidate? {
        if candidates.contains(where: { $0.width != nil }) {
            return candidates.filter { $0.width != nil }.max { $0.width! < $1.width! }
        }
        return candidates.max { ($0.density ?? 1) < ($1.density ?? 1) }
    }

    /// A `src` that only holds the place of the real image.
    static func isPlaceholder(_ url: String) -> Bool {
        if url.utf8.starts(with: "data:".utf8) || url.utf8.starts(with: "DATA:".utf8) { return true }
        let file = (url.split(separator: "/").last.map(String.init) ?? url).lowercased()
        return placeholderFiles.contains(file) || file.hasPrefix("placeholder")
    }

    static let placeholderFiles: Set<String> = [
        "blank.gif", "spacer.gif", "pixel.gif", "transparent.gif", "1x1.gif", "lazy.gif", "blank.png", "1x1.png",
    ]

    /// Walks a tree, collecting images in document order.
    struct Collector {
        let pageURL: String
        let options: Options
        var base: URL?
        var found: [FoundImage] = []
        private var seen: Set<String> = []

        init(pageURL: String, options: Options) {
            self.pageURL = pageURL
            self.options = options
            base = URL(string: pageURL)
        }

        var isFull: Bool { options.limit.map { found.count >= $0 } ?? false }

        mutating func walk(_ start: xmlNodePtr) {
            walkOne(start, pictureSources: [])
        }

        private mutating func walkOne(_ node: xmlNodePtr, pictureSources: [Candidate]) {
            guard !isFull else { return }
            // Most nodes are text or ordinary elements: checked in place before naming them.
            if node.pointee.type == XML_ELEMENT_NODE, Self.mayMatter(node) {
                switch HTMLImages.name(node) {
                case "img":
                    image(node, pictureSources: pictureSources)
                    return
                case "picture":
                    var sources: [Candidate] = []
                    for child in children(node) where HTMLImages.isElement(child, "source") {
                        for name in ["srcset"] + lazySrcsetAttributes {
                            if let srcset = HTMLImages.attribute(child, name) { sources += parseSrcset(srcset) }
                        }
                    }
                    for child in children(node) { walkOne(child, pictureSources: sources) }
                    return
                case "noscript":
                    // libxml2 keeps a noscript's content as text when it is in <head>; parse it.
                    let hasElements = children(node).contains { $0.pointee.type == XML_ELEMENT_NODE }
                    if !hasElements, let text = xmlNodeGetContent(node) {
                        let markup = String(cString: text)
                        rivulet_xml_free(text)
                        fragment(markup)
                        return
                    }
                case "script", "style", "template":
                    return
                default:
                    break
                }
            }
            var child = node.pointee.children
            while let current = child {
                walkOne(current, pictureSources: pictureSources)
                child = current.pointee.next
            }
        }

        /// Whether an element is one the walk treats apart (the rest are only descended into).
        private static func mayMatter(_ node: xmlNodePtr) -> Bool {
            HTMLImages.isElement(node, "img") || HTMLImages.isElement(node, "picture")
                || HTMLImages.isElement(node, "noscript") || HTMLImages.isElement(node, "script")
                || HTMLImages.isElement(node, "style") || HTMLImages.isElement(node, "template")
        }

        private func children(_ node: xmlNodePtr) -> [xmlNodePtr] {
            var result: [xmlNodePtr] = []
            var child = node.pointee.children
            while let current = child {
                result.append(current)
                child = current.pointee.next
            }
            return result
        }

        private mutating func fragment(_ markup: String) {
            let bytes = Array(markup.utf8)
            guard !bytes.isEmpty else { return }
            let parsingOptions = Int32(
                HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
                    | HTML_PARSE_NONET.rawValue)
            let document: htmlDocPtr? = bytes.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    htmlReadMemory($0, Int32(buffer.count), pageURL, "UTF-8", parsingOptions)
                }
            }
            guard let document else { return }
            defer { xmlFreeDoc(document) }
            if let root = xmlDocGetRootElement(document) { walkOne(root, pictureSources: []) }
        }

        private mutating func image(_ node: xmlNodePtr, pictureSources: [Candidate]) {
            var candidates = pictureSources
            for name in ["srcset"] + lazySrcsetAttributes {
                if let srcset = HTMLImages.attribute(node, name) { candidates += parseSrcset(srcset) }
            }
            let src = HTMLImages.attribute(node, "src")?.trimmedHTML
            let lazy = lazyAttributes.lazy.compactMap { HTMLImages.attribute(node, $0) }
                .map(\.trimmedHTML).first { !$0.isEmpty }
            var chosen: String?
            var width = HTMLImages.attribute(node, "width").flatMap(Self.pixels)
            let height = HTMLImages.attribute(node, "height").flatMap(Self.pixels)
            if let best = largest(candidates.filter { !isPlaceholder($0.url) || options.includeData }) {
                chosen = best.url
                if width == nil { width = best.width }
            } else if let lazy {
                chosen = lazy
            } else if let src, !src.isEmpty, !isPlaceholder(src) || (options.includeData && src.hasPrefix("data:")) {
                chosen = src
            }
            guard let chosen else { return }
            add(chosen, alt: HTMLImages.attribute(node, "alt"), width: width, height: height)
        }

        /// `og:image` and `twitter:image` of the page's meta tags.
        mutating func metaImages(_ root: xmlNodePtr) {
            let start = HTMLImages.head(root) ?? root
            var next: xmlNodePtr? = start
            while let node = next, !isFull {
                next = HTMLImages.following(node, within: start)
                if HTMLImages.isElement(node, "meta") {
                    let key = (HTMLImages.attribute(node, "property") ?? HTMLImages.attribute(node, "name") ?? "")
                        .lowercased()
                    if ["og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"]
                        .contains(key), let content = HTMLImages.attribute(node, "content")
                    {
                        add(content.trimmedHTML, alt: nil, width: nil, height: nil)
                    }
                }
            }
        }

        private static func pixels(_ text: String) -> Int? {
            let trimmed = text.trimmedHTML
            return Int(trimmed.hasSuffix("px") ? String(trimmed.dropLast(2)) : trimmed)
        }

        /// The base's text up to its last `/`, when joining a plain relative path to it is all that
        /// resolving that path does (an http(s) base with no dot segment, query or fragment).
        private lazy var baseDirectory: String? = {
            guard let text = base?.absoluteString, let scheme = base?.scheme?.lowercased(),
                scheme == "http" || scheme == "https", !text.contains("/./"), !text.contains("/../"),
                !text.contains("?"), !text.contains("#"),
                let slash = text.lastIndex(of: "/"), text[..<slash].hasSuffix("/") == false,
                text.distance(from: text.startIndex, to: slash) > scheme.count + 3
            else { return nil }
            return String(text[...slash])
        }()

        /// Whether `reference` is a plain relative path (`img/a-1.png`): letters, digits and
        /// `-._~/`, no leading `/` or `.`, no dot segment, which resolves by joining.
        private static func isPlainRelativePath(_ reference: String) -> Bool {
            var previous: UInt8 = UInt8(ascii: "/")
            for byte in reference.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    break
                case UInt8(ascii: "."): if previous == UInt8(ascii: "/") { return false }
                case UInt8(ascii: "/"): if previous == UInt8(ascii: "/") { return false }
                default: return false
                }
                previous = byte
            }
            return !reference.isEmpty
        }

        private mutating func add(_ reference: String, alt: String?, width: Int?, height: Int?) {
            guard !isFull else { return }
            // The common case, `src="img/x.png"`, joined to the base without a URL parser.
            if Self.isPlainRelativePath(reference), let baseDirectory {
                let resolved = baseDirectory + reference
                guard seen.insert(resolved).inserted else { return }
                found.append(FoundImage(url: resolved, alt: alt, width: width, height: height))
                return
            }
            let lower = reference.lowercased()
            if lower.hasPrefix("javascript:") { return }
            var resolved: String
            if lower.hasPrefix("data:") {
                guard options.includeData else { return }
                resolved = reference
            } else {
                guard let url = URL(string: reference, relativeTo: base)?.absoluteURL,
                    let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
                else { return }
                resolved = url.absoluteString
            }
            if resolved.hasSuffix("#") { resolved.removeLast() }
            guard seen.insert(resolved).inserted else { return }
            found.append(FoundImage(url: resolved, alt: alt, width: width, height: height))
        }
    }
}
