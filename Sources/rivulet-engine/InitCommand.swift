import ArgumentParser
import Foundation

/// `rivulet init [NAME]`: writes a starter pipeline and its test, as Vector's `generate` and
/// Redpanda Connect's `create` do, and says what to run next.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a starter pipeline (NAME.yaml) and its test (NAME.test.yaml) in the current folder.")

    @Argument(help: "The pipeline's name.")
    var name: String = "pipeline"

    func validate() throws {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
            throw ValidationError("the name is a file name without a folder, such as orders")
        }
    }

    func run() throws {
        let pipeline = "\(name).yaml"
        let test = "\(name).test.yaml"
        for file in [pipeline, test] where FileManager.default.fileExists(atPath: file) {
            RunLog.error("error: \(file) exists already; init writes only new files")
            throw ExitCode(2)
        }
        try Self.pipeline(name).write(toFile: pipeline, atomically: true, encoding: .utf8)
        try Self.test(pipeline).write(toFile: test, atomically: true, encoding: .utf8)
        // The commands' comments in one column, however long the name.
        let next = [
            ("rivulet run \(pipeline)", "prints the orders that have an amount, as they come"),
            ("rivulet test \(test)", "checks them on a virtual clock, at once"),
            ("rivulet components", "every source, operator and sink"),
        ]
        let width = next.map(\.0.count).max()! + 4
        let lines = next.map { command, comment in
            "  " + command + String(repeating: " ", count: width - command.count) + "# " + comment + "\n"
        }
        FileHandleOutput.standardOutput.write("wrote \(pipeline) and \(test)\nnext:\n" + lines.joined())
    }

    /// A pipeline that runs anywhere: a timeline of orders, a filter, a map, standard output.
    static func pipeline(_ name: String) -> String {
        """
        # \(name): a starting point. Replace the source with a file, an HTTP API or stdin
        # (rivulet components lists them all), and add operators to the chain.
        name: \(name)
        source:
          events:
            - { at: 0s, next: { id: 1, item: tea, amount: 4 } }
            - { at: 1s, next: { id: 2, item: coffee, amount: 0 } }
            - { at: 2s, next: { id: 3, item: cake, amount: 12 } }
            - { at: 2s, complete: true }
        ops:
          - filter: .amount > 0
          - map: "{order: .id, what: .item, cents: .amount * 100}"
        sink: stdout

        """
    }

    /// Its test: the same timeline on a virtual clock, every event checked at its time.
    static func test(_ pipeline: String) -> String {
        """
        # Run with: rivulet test \(pipeline.replacingOccurrences(of: ".yaml", with: ".test.yaml"))
        pipeline: \(pipeline)
        tests:
          - name: orders without an amount are left out
            expect:
              - { at: 0ms, next: { order: 1, what: tea, cents: 400 } }
              - { at: 2s, next: { order: 3, what: cake, cents: 1200 } }
              - { at: 2s, complete: true }

        """
    }
}
