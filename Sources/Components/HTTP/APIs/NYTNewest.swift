@_spi(Components) import Pipeline

private enum Key {
    static let q = Parameter<Template?>("q", doc: "Optional search text.", example: "climate")
}

extension BuiltinComponents {
    /// `nyt.newest` — the newest New York Times articles, 10 a page.
    public static let nytNewest = ComponentSpec(
        name: "nyt.newest",
        summary: "The newest New York Times articles (Article Search, sorted newest), 10 a page.",
        docs: """
            The "More Next 10 News" list: inside scanPaginate each trigger fetches the next 10. Takes \
            the same key, paging and caps as nyt.search; q and fq narrow the list.
            """,
        parameters: [Key.q] + NYTArticleSearch.parameters,
        example: """
            - scanPaginate:
                source: { nyt.newest: { fq: 'source:("The New York Times")' } }
            """,
        validate: { values, validation in APISource.validate(NYTArticleSearch.api, values, validation) },
        checkpointing: PagedFetch.checkpointing,
        delivery: PagedFetch.delivery,
        factory: .source { parameters, context in
            try NYTArticleSearch.source(parameters, context: context, q: parameters[Key.q], sort: "newest")
        })
}
