import ArgumentParser
import StateStore

#if canImport(Glibc)
    import Glibc
#endif

/// `rivulet state PATH`: what a state store holds; `--reset NAME` forgets one pipeline.
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "List the pipelines a state store (run --state) holds checkpoints of, or forget one.")

    @Argument(help: "The state store file.")
    var path: String

    @Option(help: "Forget this pipeline's checkpoint, so its next run starts over.")
    var reset: String?

    func run() throws {
        guard access(path, F_OK) == 0 else {
            RunLog.error("error: no state store at '\(path)'")
            throw ExitCode(2)
        }
        do {
            // Listing only reads: a store this process may not write is still listed.
            let store = try StateStore(path: path, readOnly: reset == nil)
            if let reset {
                try store.lock(pipeline: reset)
                guard try store.reset(reset) else {
                    let names = try store.all().map(\.pipeline)
                    RunLog.error(
                        "error: '\(path)' holds no checkpoint of '\(reset)'"
                            + (names.isEmpty ? "" : "; it holds: \(names.joined(separator: ", "))"))
                    throw ExitCode(2)
                }
                FileHandleOutput.standardOutput.write("forgot '\(reset)': its next run starts over\n")
                return
            }
            for checkpoint in try store.all() {
                let status = checkpoint.complete ? "completed" : "resumable"
                FileHandleOutput.standardOutput.write(
                    "\(checkpoint.pipeline)\t\(status)\tcheckpoint \(checkpoint.sequence)\t"
                        + "saved \(Self.timestamp(checkpoint.savedAt))\t\(checkpoint.state.count) components with state\n"
                )
            }
        } catch let error as StateStoreError {
            RunLog.error("\(error)")
            throw ExitCode(2)
        }
    }

    /// `2026-11-23 14:05:09 UTC`.
    static func timestamp(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S UTC", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
