import ArgumentParser
import Components
import Foundation
import Pipeline

/// `rivulet partitions --nats URL --group NAME`: which runner of a group holds which partition,
/// and how far behind each partition's consumer is.
struct PartitionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "partitions",
        abstract: "Show a runner group's partitions: which runner holds each, and what waits to be read.")

    @Option(help: "The NATS server(s), comma-separated (nats://127.0.0.1:4222).")
    var nats: String

    @Option(help: "The group's name, as its nats sources write it (group: NAME).")
    var group: String

    func run() throws {
        Secrets.shared.addURLCredentials(in: nats)
        do {
            FileHandleOutput.standardOutput.write(try NATSGroupStatus.read(urls: nats, group: group).text())
        } catch {
            RunLog.error("error: \(error)")
            throw ExitCode(1)
        }
    }
}
