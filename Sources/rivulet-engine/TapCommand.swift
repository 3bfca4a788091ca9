import ArgumentParser
import Components
import Foundation

/// `rivulet tap HOST:PORT`: prints the elements passing one component of a run started with
/// `--metrics HOST:PORT`, as JSON Lines. The run copies them into a bounded buffer and never waits
/// for the tap: what does not fit is dropped, counted, and said on stderr.
struct TapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tap",
        abstract:
            "Print the elements passing a component of a running pipeline (started with --metrics), as JSON Lines.")

    @Argument(help: ArgumentHelp("The address the run's --metrics serves.", valueName: "host:port"))
    var address: String

    @Option(
        help:
            "Its place, as rivulet top shows it (source, ops.2, sink, streams.NAME.ops.0), a stream's name (what it emits) or a glob matching one place (default: the first sink)."
    )
    var component: String?

    @Option(help: "Stop after this many elements (default: until the component ends or Ctrl-C).")
    var limit: Int?

    func validate() throws {
        if HTTPServerAddress.parse(address) == nil {
            throw ValidationError("tap expects HOST:PORT, such as 127.0.0.1:9464; got '\(address)'")
        }
        if let limit, limit < 1 { throw ValidationError("--limit expects a positive number, got \(limit)") }
    }

    func run() throws {
        guard let (host, port) = HTTPServerAddress.parse(address) else { throw ExitCode(2) }
        // No limit: none asked for (the endpoint refuses a limit below one).
        var query = limit.map { ["limit=\($0)"] } ?? []
        if let component {
            query.append(
                "place=\(component.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? component)")
        }
        var pending: [UInt8] = []
        var dropped = 0
        let answer: (status: Int, body: [UInt8])
        do {
            answer = try StatsClient.stream(host: host, port: port, path: "/tap?" + query.joined(separator: "&")) {
                bytes in
                pending += bytes
                // Whole lines only; the server's notes (a line starting with 0x1E) go to the count.
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = Array(pending[...newline])
                    pending.removeFirst(newline + 1)
                    if line.first == 0x1E {
                        dropped +=
                            Int(
                                String(decoding: line.dropFirst().dropLast(), as: UTF8.self).split(separator: " ").last
                                    ?? "") ?? 0
                    } else {
                        FileHandleOutput.standardOutput.write(String(decoding: line, as: UTF8.self))
                    }
                }
            }
        } catch let failure as StatsClient.Failure {
            RunLog.error("error: \(failure.message)")
            throw ExitCode(1)
        }
        guard answer.status == 200 else {
            let message = String(decoding: answer.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            RunLog.error("error: \(address) answered \(answer.status): \(message)")
            throw ExitCode(1)
        }
        if dropped > 0 {
            RunLog.warning("tap: \(dropped) elements not shown: the pipeline went faster than the tap could print")
        }
    }
}
