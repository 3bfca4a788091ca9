import ArgumentParser

/// The `rivulet` command: runs, checks, tests and describes stream pipelines.
@main
struct Rivulet: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "rivulet",
        abstract: "Run stream pipelines written in YAML on a reactive runtime with RxSwift's semantics.",
        discussion: """
            A pipeline file names a source, a chain of Rx operators and a sink. See README.md.
            """,
        version: version
    )
}
