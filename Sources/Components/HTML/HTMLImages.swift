import CLibXML2
import Foundation

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

/// Finds the images of an HTML page with libxml2's HTML parser in recovery mode, so broken real
/// pages still give the images before the break.
///
/// A whole page is read as a stream of parse events (SAX): no tree is built, which makes it about
/// three times faster than building libxml2's tree and walking it. A `selector` needs the tree
/// (XPath); the selected nodes are then walked as the same events, so one `ImageScanner` decides
/// in both cases. libxml2 builds its tree from these very events, so the two agree; the `html`
/// fuzz target holds them to it.
enum HTMLImages {
    struct Options {
        /// Keep `data:` URLs.
        var includeData = false
        /// Only images inside what this selects (XPath, or a small CSS subset).
        var selector: String?
        /// Stop after this many.
        var limit: Int?
    }

    private static let parsingOptions = Int32(
        HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
            | HTML_PARSE_NONET.rawValue)

    /// The images of `body`, a page fetched from `pageURL`, in document order, de-duplicated.
    /// `charset` is the Content-Type's; without it libxml2 reads the page's own `<meta charset>`.
    /// `walkingTree` reads a whole page from libxml2's tree instead of its events (for tests).
    static func extract(
        _ body: [UInt8], pageURL: String, charset: String?, options: Options, walkingTree: Bool = false
    ) throws -> [FoundImage] {
        guard !body.isEmpty else { return [] }
        rivulet_xml_silence()
        var scanner = ImageScanner(options: options)
        guard options.selector != nil || walkingTree else {
            body.withUnsafeBufferPointer { scan($0, charset: charset, into: &scanner) }
            return scanner.finish(pageURL: pageURL, metaImages: true)
        }
        let document: htmlDocPtr? = body.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                htmlReadMemory(
                    $0, Int32(buffer.count), pageURL, charset, parsingOptions | Int32(HTML_PARSE_COMPACT.rawValue))
            }
        }
        guard let document else { return [] }
        defer { xmlFreeDoc(document) }
        guard let root = xmlDocGetRootElement(document) else { return [] }
        guard let selector = options.selector else {
            scanner.walk(root)
            return scanner.finish(pageURL: pageURL, metaImages: true)
        }
        // The whole page once for its <base>, then each selected node as a page of its own.
        scanner.collectsImages = false
        scanner.walk(root)
        scanner.collectsImages = true
        for node in try select(selector, in: document) { scanner.walk(node) }
        return scanner.finish(pageURL: pageURL, metaImages: false)
    }

    /// Parses `markup` with `scanner` receiving libxml2's SAX events (start tag, end tag, text).
    /// Set up as `htmlReadMemory` sets up its parser (so a page without a charset is read as UTF-8
    /// alike), with these callbacks in place of the ones building the tree.
    static func scan(_ markup: UnsafeBufferPointer<UInt8>, charset: String?, into scanner: inout ImageScanner) {
        guard let base = markup.baseAddress, !markup.isEmpty else { return }
        let created = base.withMemoryRebound(to: CChar.self, capacity: markup.count) {
            xmlCreateMemoryParserCtxt($0, Int32(markup.count))
        }
        guard let context = created else { return }
        defer { xmlFreeParserCtxt(context) }
        guard let handler = context.pointee.sax else { return }
        handler.pointee = htmlSAXHandler()
        handler.pointee.startElement = { context, name, attributes in
            guard let name else { return }
            ImageScanner.of(context).pointee.start(HTMLImages.treeName(name), .parsed(attributes))
        }
        handler.pointee.endElement = { context, _ in ImageScanner.of(context).pointee.end() }
        handler.pointee.characters = { context, text, length in
            guard let text, length > 0 else { return }
            ImageScanner.of(context).pointee.parsedText(
                UnsafeBufferPointer(start: text, count: Int(length)), isCDATA: false)
        }
        handler.pointee.cdataBlock = { context, text, length in
            guard let text, length > 0 else { return }
            ImageScanner.of(context).pointee.parsedText(
                UnsafeBufferPointer(start: text, count: Int(length)), isCDATA: true)
        }
        // Where libxml2's tree puts what the root element does not hold depends on these.
        handler.pointee.comment = { context, _ in ImageScanner.of(context).pointee.otherNode() }
        handler.pointee.processingInstruction = { context, _, _ in ImageScanner.of(context).pointee.otherNode() }
        handler.pointee.internalSubset = { context, _, _, _ in ImageScanner.of(context).pointee.documentType() }
        htmlCtxtUseOptions(context, parsingOptions)
        context.pointee.html = 1
        if let charset, let encoding = xmlFindCharEncodingHandler(charset), let input = context.pointee.input {
            xmlSwitchToEncoding(context, encoding)
            // A charset given is kept over the page's own <meta charset>.
            if let previous = input.pointee.encoding { rivulet_xml_free(UnsafeMutableRawPointer(mutating: previous)) }
            input.pointee.encoding = UnsafePointer(xmlStrdup(charset))
        }
        withUnsafeMutablePointer(to: &scanner) { scanner in
            context.pointee._private = UnsafeMutableRawPointer(scanner)
            scanner.pointee.readsParser = true
            scanner.pointee.beginPage()
            htmlParseDocument(context)
            scanner.pointee.endPage()
        }
        if let document = context.pointee.myDoc {
            xmlFreeDoc(document)
            context.pointee.myDoc = nil
        }
    }

    /// The name libxml2's tree gives an element the parser names `name`: the part after a
    /// namespace prefix (`x:img` is an `img`), as `xmlSplitQName` splits it.
    static func treeName(_ name: UnsafePointer<xmlChar>) -> UnsafePointer<xmlChar> {
        guard name[0] != UInt8(ascii: ":"), let colon = xmlStrchr(name, UInt8(ascii: ":")) else { return name }
        let local = colon + 1
        return local[0] == 0 ? name : local
    }

    /// `selector` compiled: XPath when it starts with `/` or `(`, else CSS made XPath. The caller
    /// frees it (`xmlXPathFreeCompExpr`). Lint checks a selector with it (`check`), so a run does
    /// not fail on one.
    static func compile(_ selector: String) throws -> xmlXPathCompExprPtr {
        let xpath = selector.hasPrefix("/") || selector.hasPrefix("(") ? selector : try CSSSelector.xpath(selector)
        rivulet_xml_silence()
        guard let compiled = xmlXPathCompile(xpath) else {
            throw HTMLImageError(description: "selector '\(selector)' is not a valid XPath expression")
        }
        return compiled
    }

    /// Throws what is wrong with `selector`, as a run would.
    static func check(selector: String) throws {
        xmlXPathFreeCompExpr(try compile(selector))
    }

    /// The nodes `selector` picks.
    static func select(_ selector: String, in document: htmlDocPtr) throws -> [xmlNodePtr] {
        let compiled = try compile(selector)
        defer { xmlXPathFreeCompExpr(compiled) }
        guard let context = xmlXPathNewContext(document) else { return [] }
        defer { xmlXPathFreeContext(context) }
        // Compiled, it can still fail to evaluate (an unknown function).
        guard let result = xmlXPathCompiledEval(compiled, context) else {
            throw HTMLImageError(description: "selector '\(selector)' could not be evaluated")
        }
        defer { xmlXPathFreeObject(result) }
        guard let set = result.pointee.nodesetval else { return [] }
        return (0..<Int(set.pointee.nodeNr)).compactMap { set.pointee.nodeTab[$0] }
    }
}

extension ImageScanner {
    /// The scanner a SAX callback's context carries.
    fileprivate static func of(_ context: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<ImageScanner> {
        context!.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private
            .assumingMemoryBound(to: ImageScanner.self)
    }

    /// Gives the scanner `node`'s subtree as the events parsing it gave.
    mutating func walk(_ node: xmlNodePtr) {
        beginPage()
        visit(node)
        endPage()
    }

    private mutating func visit(_ node: xmlNodePtr) {
        switch node.pointee.type {
        case XML_ELEMENT_NODE:
            start(node.pointee.name, .node(node))
            visitChildren(node)
            end()
        case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
            if let content = node.pointee.content {
                text(UnsafeBufferPointer(start: content, count: strlen(content)))
            }
        default:
            // The document or an attribute, when a selector picks one: what is under it.
            visitChildren(node)
        }
    }

    private mutating func visitChildren(_ node: xmlNodePtr) {
        var child = node.pointee.children
        while let current = child {
            visit(current)
            child = current.pointee.next
        }
    }
}
