import ArgumentParser
import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline

/// `rivulet partitions --nats URL --group NAME`: which runner of a group holds which partition,
/// and how far behind each partition's consumer is.
struct PartitionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "partitions",
        abstract: "Show a runner group's partitions: which runner holds each, and what waits to be read.")

    @Option(help: "The NATS server(s), comma-separated (default: $NATS_URL, else nats://127.0.0.1:4222).")
    var nats: String?

    @Option(help: "The group's name, as its nats sources write it (group: NAME).")
    var group: String

    func run() throws {
        let servers = NATSCommandLine.servers(nats)
        Secrets.shared.addURLCredentials(in: servers)
        do {
            FileHandleOutput.standardOutput.write(try NATSGroupStatus.read(urls: servers, group: group).text())
        } catch {
            var message = "error: \(error)"
            // A group that is not there: the ones that are, and the closest name.
            if let groups = try? NATSCommandLine.groupNames(servers: servers), !groups.contains(group) {
                message +=
                    groups.isEmpty
                    ? "\nnote: there is no runner group on \(servers)"
                    : "\nnote: the runner groups there: \(groups.sorted().joined(separator: ", "))"
                        + (Suggestions.closest(to: group, in: groups).map { "; did you mean '\($0)'?" } ?? "")
            }
            RunLog.error(message)
            throw ExitCode(1)
        }
    }
}
