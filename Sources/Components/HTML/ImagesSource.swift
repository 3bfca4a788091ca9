import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum ImageEmission: String, ParameterChoice {
    case items, all
}
private enum Key {
    static let url = Parameter<Template>(
        "url", doc: "The page; a template over the triggering element.",
        example: "\"${IMAGES_BASE_URL:-https://images.example}/search?q={{ . }}\"")
    static let selector = Parameter<String?>(
        "selector", doc: "Only images inside what this selects (XPath or CSS).", example: "\"div.results img\"")
    static let limit = Parameter<Int?>("limit", doc: "Emit at most this many images.", example: "30").atLeast(0)
    static let maxBytes = Parameter<Int>("maxBytes", default: 5_242_880, doc: "The largest page read (5 MiB).").atLeast(
        1)
    static let includeData = Parameter<Bool>("includeData", default: false, doc: "Keep data: URLs.")
    static let headers = Parameter<ParameterMap<Template>?>(
        "headers", doc: "Request headers (templates).", example: "{ Accept-Language: ja }")
    static let emit = Parameter<ImageEmission>(
        "emit", default: .items, doc: "items: one element per image; all: one list of the page's images.")
    static let timeout = Parameter<RxTimeInterval>(
        "timeout", default: .seconds(30), doc: "The longest the page may take."
    ).above(RxTimeInterval.zero)
}

extension BuiltinComponents {
    /// `images: {url: …}` — the images of an HTML page.
    public static let images = ComponentSpec(
        name: "images",
        summary: "Fetches an HTML page and emits its images: {url, alt, width, height, page}.",
        docs: """
            The page is fetched through the same HTTP layer as the API sources (retries, rate limits, \
            redirects, cancellation, record and replay) and parsed by libxml2's HTML parser in \
            recovery mode, so a broken page still gives the images before the break. Found: img src; \
            lazy-loading attributes (data-src, data-original, data-lazy-src, …), preferred over a \
            placeholder src such as a data: GIF; srcset and data-srcset (the largest candidate, by w \
            or else x; URLs may contain commas); picture > source; images inside noscript; og:image \
            and twitter:image. URLs are resolved against <base href> or the final URL after \
            redirects; data: URLs are dropped unless includeData; duplicates are dropped. The \
            charset comes from the Content-Type or the page's <meta charset> (UTF-8, Shift_JIS, \
            EUC-JP, …). A page over maxBytes is an error and no more of it is read; a response that \
            is not HTML is an error showing its type and first bytes. selector narrows the search: \
            XPath when it starts with / or (, else CSS (tag, .class, #id, [attr], [attr=value], \
            descendants, commas).
            """,
        parameters: [
            Key.url, Key.selector, Key.limit, Key.maxBytes, Key.includeData, Key.headers, Key.emit, Key.timeout,
            RetryPolicy.parameter,
        ],
        primary: Key.url,
        example: """
            - flatMapLatest:
                images: { url: "https://images.example/search?q={{ . }}", limit: 20 }
            """,
        validate: { values, validation in
            if let written = values[Key.selector] {
                do { try HTMLImages.check(selector: written) } catch {
                    validation.error("\(error)", at: Key.selector, in: values)
                }
            }
        },
        checkpointing: .restartsWork("its page: a resumed run fetches it again and emits every image again"),
        delivery: Delivery(
            .atLeastOnce,
            "a new run fetches the page again and emits every image again"),
        factory: .source { parameters, context in
            let setup = try HTTPClientSetup(
                timeout: parameters[Key.timeout], retry: parameters[RetryPolicy.parameter], context: context)
            let urlTemplate = parameters[Key.url]
            let headers = parameters[Key.headers]?.pairs ?? []
            let maxBytes = parameters[Key.maxBytes]
            let all = parameters[Key.emit] == .all
            let extraction = HTMLImages.Options(
                includeData: parameters[Key.includeData], selector: parameters[Key.selector],
                limit: parameters[Key.limit])
            return PipelineSource { element in
                Observable.deferred {
                    var request = try HTTPSourceRequest.make(
                        element, url: urlTemplate, method: "GET", query: [], headers: headers, body: nil,
                        context: context)
                    request.headers.removeAll { $0.0 == "Accept" }
                    request.headers.append(("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"))
                    request.maximumResponseBytes = maxBytes
                    return setup.fetch(request).flatMap { response -> Observable<Value> in
                        do {
                            let found = try ImagePage.images(
                                in: response, request: request, options: extraction, setup: setup)
                            return all ? .just(.array(found)) : .from(found)
                        } catch {
                            return .error(error)
                        }
                    }
                }
            }
        })
}

/// Turns a fetched page into `images` elements.
enum ImagePage {
    static func images(
        in response: HTTPResponseData, request: HTTPRequestData, options: HTMLImages.Options, setup: HTTPClientSetup
    ) throws -> [Value] {
        let context = setup.context
        let origin = "\(request.method) \(setup.redactor.redact(url: request.url))"
        let type = response.header("content-type")?.lowercased() ?? ""
        let mediaType = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let looksLikeMarkup = response.body.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) } == 0x3C
        let isHTML =
            mediaType.isEmpty ? looksLikeMarkup : (mediaType == "text/html" || mediaType == "application/xhtml+xml")
        guard isHTML else {
            throw context.error(
                "\(origin): not an HTML page (content-type: \(type.isEmpty ? "none" : type)): "
                    + setup.redactor.redact(HTTPBody.preview(response.body)))
        }
        var charset: String?
        if let range = type.range(of: "charset=") {
            charset = String(type[range.upperBound...]).split(separator: ";").first
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"' ")) }
        }
        let page = response.url.isEmpty ? request.url : response.url
        let found: [FoundImage]
        do {
            found = try HTMLImages.extract(response.body, pageURL: page, charset: charset, options: options)
        } catch {
            throw context.error("\(origin): \(error)")
        }
        let pageValue = Value.string(page)
        return found.map { image in
            let values: [Value] = [
                .string(image.url), image.alt.map(Value.string) ?? .null, image.width.map(Value.int) ?? .null,
                image.height.map(Value.int) ?? .null, pageValue,
            ]
            return .object(JSONObject(distinctKeys: keys, values: values))
        }
    }

    /// The members of every image element, in this order (one list the objects share).
    private static let keys = ["url", "alt", "width", "height", "page"]
}
