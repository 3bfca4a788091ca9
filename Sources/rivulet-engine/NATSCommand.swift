import ArgumentParser
import Components
import Foundation
@_spi(Host) import Pipeline

/// `rivulet nats read|publish|list`: a JetStream stream read and written by hand, as kcat does
/// for Kafka and `nats sub`/`nats pub` for NATS.
struct NATSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nats",
        abstract: "Read a JetStream stream, publish lines to it, or list streams, consumers and runner groups.",
        subcommands: [Read.self, Publish.self, List.self])

    /// The server option every subcommand takes.
    struct Server: ParsableArguments {
        @Option(
            name: .customLong("nats"),
            help: "The NATS server(s), comma-separated (default: $NATS_URL, else nats://127.0.0.1:4222).")
        var urls: String?

        var resolved: String { NATSCommandLine.servers(urls) }
    }

    /// Runs `body`, a failure printed as `error: …` with exit code 1.
    static func reporting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let exit as ExitCode {
            throw exit
        } catch let failure as NATSCommandLine.Failure {
            let guess = failure.unknown.flatMap { Suggestions.closest(to: $0.name, in: $0.candidates) }
            RunLog.error("error: \(failure)" + (guess.map { "; did you mean '\($0)'?" } ?? ""))
            throw ExitCode(1)
        } catch {
            RunLog.error("error: \(error)")
            throw ExitCode(1)
        }
    }

    struct Read: ParsableCommand, HandlesStopSignals {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract:
                "Write a stream's messages (or those of a subject it stores) as JSON Lines, through a consumer deleted after.",
            discussion: """
                Each message's data is written as a line: JSON as it is (compacted), anything else as a \
                JSON string. --meta writes {subject, sequence, time, headers, data} instead. Without \
                --follow, the reading ends at the last message there was when it started.
                """)

        var handlesStopSignals: Bool { true }

        @Argument(help: "A stream's name, or a subject (wildcards allowed) that one stream stores.")
        var target: String

        @Option(help: "Where to start: all, new, last, a stream sequence (from 1) or an RFC 3339 time.")
        var from: String = "all"

        @Option(help: "Stop after this many messages.")
        var count: Int?

        @Flag(help: "Keep reading new messages until interrupted (or --count).")
        var follow = false

        @Flag(help: "Write each message as {subject, sequence, time, headers, data}.")
        var meta = false

        @OptionGroup var server: Server

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        }

        func run() throws {
            var signal: Int32?
            try NATSCommand.reporting {
                try NATSCommandLine.read(
                    .init(target: target, from: from, count: count, follow: follow, envelope: meta),
                    servers: server.resolved,
                    stopped: {
                        signal = signal ?? SignalWatcher.takePendingStopSignal()
                        return signal != nil
                    }
                ) { line in
                    FileHandleOutput.standardOutput.write(line + "\n")
                }
            }
            // Interrupted: the consumer was deleted; the exit status says which signal ended it.
            if let signal { throw ExitCode(128 + signal) }
        }
    }

    struct Publish: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "publish",
            abstract: "Publish each line of standard input as a message to a subject a stream stores.",
            discussion: "Each message is acknowledged by its stream before the next is sent; empty lines are skipped.")

        @Argument(help: "The subject.")
        var subject: String

        @OptionGroup var server: Server

        func run() throws {
            try NATSCommand.reporting {
                let published = try NATSCommandLine.publish(subject: subject, servers: server.resolved) {
                    while let line = Swift.readLine(strippingNewline: true) {
                        if !line.isEmpty { return line }
                    }
                    return nil
                }
                RunLog.info("published \(published) message\(published == 1 ? "" : "s") to \(subject)")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the streams, their consumers and the runner groups on the server.")

        @OptionGroup var server: Server

        func run() throws {
            try NATSCommand.reporting {
                FileHandleOutput.standardOutput.write(try NATSCommandLine.list(servers: server.resolved))
            }
        }
    }
}
