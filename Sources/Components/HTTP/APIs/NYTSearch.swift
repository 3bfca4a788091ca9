@_spi(Components) import Pipeline

private enum ArticleOrder: String, ParameterChoice {
    case relevance, newest, oldest
}
private enum Key {
    static let q = Parameter<Template?>("q", doc: "The search text.", example: "\"{{ . }}\"")
    static let sort = Parameter<ArticleOrder>("sort", default: .relevance, doc: "The order.")
}

extension BuiltinComponents {
    /// `nyt.search: {q: …}` — New York Times Article Search.
    public static let nytSearch = ComponentSpec(
        name: "nyt.search",
        summary: "Searches New York Times articles (Article Search API), 10 a page.",
        docs: """
            The key is read from NYT_API_KEY (keyVariable names another variable) and sent as the \
            api-key query parameter; recordings, logs and errors never show it. Pages are fetched \
            one after another, 10 articles each, until a page is short, the hits run out, or the \
            API's cap of 100 pages (1,000 articles); maxPages stops sooner. Each article is the API's \
            document with an added image field ({url, width, height} or null), the same for both \
            shapes of multimedia the API has used (an array with relative URLs before April 2025, \
            an object since). A 429 (NYT sends no Retry-After) is retried with backoff.
            """,
        parameters: [Key.q, Key.sort] + NYTArticleSearch.parameters,
        primary: Key.q,
        example: """
            - flatMapLatest:
                nyt.search: { q: "{{ . }}", sort: newest }
            """,
        validate: { values, validation in APISource.validate(NYTArticleSearch.api, values, validation) },
        checkpointing: PagedFetch.checkpointing,
        delivery: PagedFetch.delivery,
        factory: .source { parameters, context in
            try NYTArticleSearch.source(
                parameters, context: context, q: parameters[Key.q], sort: parameters[Key.sort].rawValue)
        })
}
