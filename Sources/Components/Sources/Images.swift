import Foundation
import Pipeline
import Reactive

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
            ParameterSpec(
                "url", .template, required: true, doc: "The page; a template over the triggering element.",
                example: "\"${IMAGES_BASE_URL:-https://images.example}/search?q={{ . }}\""),
            ParameterSpec(
                "selector", .string, doc: "Only images inside what this selects (XPath or CSS).",
                example: "\"div.results img\""),
            ParameterSpec("limit", .int, doc: "Emit at most this many images.", example: "30"),
            ParameterSpec("maxBytes", .int, default: 5_242_880, doc: "The largest page read (5 MiB)."),
            ParameterSpec("includeData", .bool, default: false, doc: "Keep data: URLs."),
            ParameterSpec(
                "headers", .map(.template), doc: "Request headers (templates).",
                example: "{ Accept-Language: ja }"),
            ParameterSpec(
                "emit", .oneOf(["items", "all"]), default: "items",
                doc: "items: one element per image; all: one list of the page's images."),
            ParameterSpec("timeout", .duration, default: "30s", doc: "The longest the page may take."),
            RetryPolicy.parameter,
        ],
        primary: "url",
        example: """
            - flatMapLatest:
                images: { url: "https://images.example/search?q={{ . }}", limit: 20 }
            """,
        check: { parameters in
            if let selector = parameters.string("selector"), !selector.hasPrefix("/"), !selector.hasPrefix("(") {
                do { _ = try CSSSelector.xpath(selector) } catch { return "\(error)" }
            }
            return nil
        },
        factory: .source { parameters, context in
            let setup = try HTTPClientSetup(parameters: parameters, context: context)
            let urlTemplate = parameters.template("url")!
            let headers = parameters.map("headers") ?? []
            let maxBytes = parameters.int("maxBytes") ?? 5_242_880
            let all = parameters.string("emit") == "all"
            let extraction = HTMLImages.Options(
                includeData: parameters.bool("includeData") ?? false, selector: parameters.string("selector"),
                limit: parameters.int("limit"))
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
        return found.map { image in
            var object = JSONObject()
            object["url"] = .string(image.url)
            object["alt"] = image.alt.map(Value.string) ?? .null
            object["width"] = image.width.map(Value.int) ?? .null
            object["height"] = image.height.map(Value.int) ?? .null
            object["page"] = .string(page)
            return .object(object)
        }
    }
}
