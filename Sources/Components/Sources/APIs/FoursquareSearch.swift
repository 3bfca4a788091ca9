import Foundation
import Pipeline

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
        parameters: [
            ParameterSpec("query", .template, doc: "What to look for.", example: "\"{{ . }}\""),
            ParameterSpec(
                "ll", .template, doc: "Latitude,longitude to search around.", example: "\"35.6812,139.7671\""),
            ParameterSpec("near", .template, doc: "A place name to search in.", example: "Tokyo"),
            ParameterSpec("radius", .int, doc: "Metres around ll (up to 100000).", example: "1000"),
            ParameterSpec("limit", .int, default: 10, doc: "Places a page, 1 to 50."),
            ParameterSpec("version", .string, default: "2025-06-17", doc: "The X-Places-Api-Version header."),
            APISource.baseURL("https://places-api.foursquare.com"),
            APISource.keyVariable("FOURSQUARE_API_KEY", doc: "The environment variable holding the service key."),
        ] + PagedFetch.commonParameters,
        primary: "query",
        example: """
            - flatMapLatest:
                foursquare.search: { query: "{{ . }}", ll: "35.6812,139.7671", radius: 2000 }
            """,
        check: { parameters in
            if let limit = parameters.int("limit"), !(1...50).contains(limit) {
                return "limit must be between 1 and 50 (Foursquare's limit), not \(limit)"
            }
            return nil
        },
        factory: .source { parameters, context in
            let api = try APISource(parameters: parameters, context: context)
            let key = api.key(parameters, fallbacks: ["FSQ_API_KEY"])
            let isLive = api.isLive
            let variable = parameters.string("keyVariable") ?? "FOURSQUARE_API_KEY"
            let version = parameters.string("version") ?? "2025-06-17"
            let fetch = PagedFetch(
                setup: api.setup, pagination: .link,
                items: { body in try ItemSelection.list(body, at: ["results"]) }, maxPages: parameters.int("maxPages"))
            let emit = EmitMode(rawValue: parameters.string("emit") ?? "items") ?? .items
            return fetch.source(emit: emit) { element in
                if isLive && key == nil {
                    throw context.error("set \(variable) to your Foursquare service key (or run with --replay FILE)")
                }
                var query = try api.query(
                    parameters, [("query", "query"), ("ll", "ll"), ("near", "near"), ("radius", "radius")],
                    element: element)
                query.append(("limit", String(parameters.int("limit") ?? 10)))
                var headers = [("Accept", "application/json"), ("X-Places-Api-Version", version)]
                if let key { headers.append(("Authorization", "Bearer \(key)")) }
                return HTTPRequestData(url: try api.url("/places/search", query: query), headers: headers)
            }
        })
}
