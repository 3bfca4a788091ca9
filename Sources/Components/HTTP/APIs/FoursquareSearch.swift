import Foundation
@_spi(Components) import Pipeline

private enum Key {
    static let query = Parameter<Template?>("query", doc: "What to look for.", example: "\"{{ . }}\"")
    static let ll = Parameter<Template?>(
        "ll", doc: "Latitude,longitude to search around.", example: "\"35.6812,139.7671\"")
    static let near = Parameter<Template?>("near", doc: "A place name to search in.", example: "Tokyo")
    static let radius = Parameter<Int?>("radius", doc: "Metres around ll (up to 100000).", example: "1000")
    static let limit = Parameter<Int?>(
        "limit", doc: "Places a page, 1 to 50; without it, limit is not sent (Foursquare's default is 10).",
        example: "20")
    static let version = Parameter<String>("version", default: "2025-06-17", doc: "The X-Places-Api-Version header.")
    static let api = APIParameters(
        baseURL: "https://places-api.foursquare.com", keyVariable: "FOURSQUARE_API_KEY",
        keyDoc: "The environment variable holding the service key.")
}

extension BuiltinComponents {
    /// `foursquare.search: {query: …, ll: …}` — Foursquare Places search.
    public static let foursquareSearch = ComponentSpec(
        name: "foursquare.search",
        summary: "Searches Foursquare places (the current Places API), following the Link header's cursor.",
        docs: """
            Sends the service key from FOURSQUARE_API_KEY as a bearer token and the API's version \
            header (X-Places-Api-Version: 2025-06-17). Give ll (lat,lng, with radius) or near (a \
            place name); without either Foursquare locates the caller. Pages follow the cursor in the \
            Link header. Each item is a place as the API gives it (fsq_place_id, name, latitude, \
            longitude, distance, location.formatted_address, categories, …).
            """,
        parameters: [Key.query, Key.ll, Key.near, Key.radius, Key.limit, Key.version] + Key.api.all,
        primary: Key.query,
        example: """
            - flatMapLatest:
                foursquare.search: { query: "{{ . }}", ll: "35.6812,139.7671", radius: 2000 }
            """,
        validate: { values, validation in
            if let count = values[Key.limit], !(1...50).contains(count) {
                validation.error(
                    "limit must be between 1 and 50 (Foursquare's limit), not \(count)", at: Key.limit, in: values)
            }
            APISource.validate(Key.api, values, validation)
        },
        checkpointing: PagedFetch.checkpointing,
        delivery: PagedFetch.delivery,
        factory: .source { parameters, context in
            let source = try APISource(Key.api, parameters: parameters, context: context)
            let variable = parameters[Key.api.keyVariable]
            let key = source.key(variable, fallbacks: ["FSQ_API_KEY"])
            let isLive = source.isLive
            let version = parameters[Key.version]
            let templates = [
                ("query", parameters[Key.query]), ("ll", parameters[Key.ll]), ("near", parameters[Key.near]),
            ]
            let radius = parameters[Key.radius]
            let limit = parameters[Key.limit]
            let fetch = PagedFetch(
                setup: source.setup, pagination: .link,
                items: { body in try ItemSelection.list(body, at: ["results"]) },
                maxPages: parameters[PagedFetch.maxPages])
            return fetch.source(emit: parameters[PagedFetch.emit]) { element in
                if isLive && key == nil {
                    throw context.error("set \(variable) to your Foursquare service key (or run with --replay FILE)")
                }
                var query = try source.query(templates, element: element)
                if let radius { query.append(("radius", String(radius))) }
                if let limit { query.append(("limit", String(limit))) }
                var headers = [("Accept", "application/json"), ("X-Places-Api-Version", version)]
                if let key { headers.append(("Authorization", "Bearer \(key)")) }
                return HTTPRequestData(url: try source.url("/places/search", query: query), headers: headers)
            }
        })
}
