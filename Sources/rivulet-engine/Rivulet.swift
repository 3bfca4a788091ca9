import ArgumentParser
@_spi(Host) @_spi(Components) import Pipeline
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The `rivulet` command: runs, checks, tests and describes stream pipelines.
@main
struct Rivulet: ParsableCommand {
    static let version = "0.1.0"
    /// `rivulet --version`: the version and the commit built (`-modified` when the work tree had
    /// changes to tracked files).
    static let versionLine = "\(version) (commit \(buildCommit))"

    static let configuration = CommandConfiguration(
        commandName: "rivulet",
        abstract: "Run stream pipelines written in YAML on a reactive runtime with RxSwift's semantics.",
        discussion: """
            A pipeline file names a source, a chain of Rx operators and a sink. See README.md.
            Exit codes: 0 success; 1 the pipeline failed at run time (or a test failed); 2 the command \
            line or a pipeline file is invalid; 130/143 after SIGINT/SIGTERM, once output is flushed.
            """,
        version: versionLine,
        subcommands: [
            RunCommand.self, TestCommand.self, LintCommand.self, GraphCommand.self, ComponentsCommand.self,
            SchemaCommand.self,
            StateCommand.self, InitCommand.self, CompletionsCommand.self, TopCommand.self, TapCommand.self,
            PartitionsCommand.self, NATSCommand.self,
        ]
    )

    /// Parses and runs the command; a usage error exits with 2, as every invalid input does.
    static func main() {
        SignalWatcher.blockSignals()
        do {
            var command = try parseAsRoot()
            // A signal that came while starting is delivered now to a command that does not
            // handle it, and ends the process as it would have.
            if (command as? HandlesStopSignals)?.handlesStopSignals != true { SignalWatcher.unblockSignals() }
            try command.run()
            // A description written to a full disk or a closed file is not a success.
            let failure = FileHandleOutput.standardOutputError.load(ordering: .relaxed)
            // A reader that had enough (`| head`) ends it quietly, as SIGPIPE would.
            if failure == EPIPE { Glibc.exit(141) }
            if failure != 0 {
                FileHandleOutput.standardError.write(
                    "error: cannot write to standard output: \(String(cString: strerror(failure)))\n")
                Glibc.exit(1)
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandleOutput.standardError.write(fullMessage(for: error) + "\n")
                Glibc.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// Writing whole texts to the standard streams with write(2), unbuffered, so nothing waits in
/// a buffer when a signal ends the run.
enum FileHandleOutput {
    case standardOutput
    case standardError

    /// The first error (errno) a write to standard output met; 0 if none. The command then exits
    /// with 1 (with 141, quietly, for a closed pipe).
    static let standardOutputError = Atomic<Int32>(0)

    func write(_ text: String) {
        var bytes = Array(Secrets.shared.redact(text).utf8)
        let descriptor: Int32 = self == .standardOutput ? 1 : 2
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes {
                Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 {
                let error = written < 0 ? errno : ENOSPC
                if self == .standardOutput {
                    _ = Self.standardOutputError.compareExchange(expected: 0, desired: error, ordering: .relaxed)
                }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }

    /// Whether the stream is a terminal (colour and redrawing only then).
    var isTerminal: Bool { isatty(self == .standardOutput ? 1 : 2) == 1 }
}
