import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let command = Parameter<[String]>(
        "command", doc: "The program and its arguments; a relative program path is resolved against the pipeline file.",
        example: "[python3, ./enrich.py]")
    static let timeout = Parameter<RxTimeInterval>(
        "timeout", default: .seconds(10), doc: "The longest the program may take to answer one element."
    ).above(RxTimeInterval.zero)
}

extension BuiltinComponents {
    /// `exec: {command: [...]}` — a process plugin: any program speaking JSON Lines.
    public static let exec = ComponentSpec(
        name: "exec",
        summary: "Runs a program once per pipeline and passes each element through it, speaking JSON Lines.",
        docs: """
            Protocol: for each element rivulet writes one line {"value": <element>} to the program's \
            standard input. The program answers with any number of lines {"emit": <value>} (each becomes \
            an element), then one line {"done": true}; or, instead of done, {"error": "message"}, which \
            fails the pipeline (or, with onError: skip or errors, drops that element). Elements are handled one at \
            a time, in order. A program that exits, crashes, writes something that is not such a line, or \
            takes longer than timeout for one element fails the pipeline with the tail of its standard \
            error. The program is stopped when the pipeline ends: SIGTERM to it and the programs it \
            started (its process group), SIGKILL 2 s later or when rivulet exits. One element's answer \
            holds at most 100,000 values and lines of at most 64 MiB; past that the element fails. \
            While the program works on an element the pipeline's thread waits for it (timers run \
            late; a signal does not); keep exec programs quick.
            """,
        parameters: [Key.command, Key.timeout],
        primary: Key.command,
        example: "- exec: { command: [python3, ./enrich.py], timeout: 2s }",
        validate: { values, validation in
            if values[Key.command].isEmpty { validation.error("exec needs a command", at: Key.command, in: values) }
        },
        checkpointing: .restartsWork(
            "its program afresh: each element is answered before the next, so none is in flight at a checkpoint; "
                + "what the program keeps of its own is not kept"),
        elementErrors: true,
        factory: .operator { parameters, context in
            var command = parameters[Key.command]
            // `./x` is relative to the pipeline file; made absolute, since the program runs in the
            // pipeline's directory too.
            for index in command.indices where command[index].hasPrefix("./") {
                command[index] = URL(fileURLWithPath: context.resolvePath(command[index])).standardizedFileURL.path
            }
            let timeout = parameters[Key.timeout]
            return { source in
                Observable.deferred {
                    let process = try ExecProcess(command: command, directory: context.baseDirectory, context: context)
                    return expandingEach(source, started: { $0.onDispose { process.stop() } }) { element in
                        try process.handle(element, timeout: timeout)
                    }
                }
            }
        })
}

/// A running exec program: requests go to its standard input, answers are read from its standard
/// output with a timeout, and its standard error is kept (the tail goes into error messages).
final class ExecProcess {
    private let process: ChildProcess
    private let reader: LineReader
    private let context: ComponentContext
    private let commandLine: String
    private let stderrTail: StderrTail

    init(command: [String], directory: String, context: ComponentContext) throws {
        self.context = context
        commandLine = command.joined(separator: " ")
        // `env -C` runs the program in the pipeline's directory (posix_spawn has no portable chdir).
        let directoryPath = URL(fileURLWithPath: directory).standardizedFileURL.path
        do {
            // In a group of its own: stopping it reaches the programs it started (a grandchild
            // holding its output kept the run going).
            process = try ChildProcess(
                executable: "/usr/bin/env", arguments: ["-C", directoryPath] + command, input: .pipe, ownGroup: true)
        } catch {
            throw context.error("cannot start '\(commandLine)': \(error)")
        }
        reader = LineReader(descriptor: process.standardOutput)
        stderrTail = StderrTail.reading(process.standardError)
        signal(SIGPIPE, SIG_IGN)
    }

    /// The most values a program may answer one element with: past it, the element fails (one
    /// answered with 10,000,000 lines grew memory 5 MB/s until its timeout).
    static let maximumAnswers = 100_000

    private func failure(_ message: String) -> PipelineRuntimeError {
        let tail = stderrTail.text
        return context.error(tail.isEmpty ? message : "\(message); its standard error ends with:\n\(tail)")
    }

    /// Writes `{"value": element}` and a newline to the program's input; a program that stopped
    /// reading it (it exited, usually) fails the run saying how.
    private func send(_ element: Value) throws {
        var request: [UInt8] = Array("{\"value\":".utf8)
        JSONSerializer.write(element, to: &request)
        request.append(contentsOf: Array("}\n".utf8))
        var offset = 0
        while offset < request.count {
            let written = request.withUnsafeBytes {
                write(process.standardInput, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 {
                // Its input is closed: it has usually exited (a missing program exits at once). Give it
                // a moment, waiting on its output's end rather than a clock, so the message says how.
                var output = pollfd(fd: process.standardOutput, events: Int16(POLLIN), revents: 0)
                _ = poll(&output, 1, 1000)
                if let ended = process.exited() ?? (output.revents & Int16(POLLHUP) != 0 ? process.wait() : nil) {
                    throw failure("'\(commandLine)' exited with \(ended) before answering (element: \(element))")
                }
                throw failure("'\(commandLine)' stopped reading its input (element: \(element))")
            }
            offset += written
        }
    }

    /// Sends `element` and collects the program's answer.
    func handle(_ element: Value, timeout: RxTimeInterval) throws -> [Value] {
        try send(element)
        var emitted: [Value] = []
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeout.totalNanoseconds))
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            var descriptor = pollfd(fd: process.standardOutput, events: Int16(POLLIN), revents: 0)
            let remaining = now >= deadline ? 0 : Int32(min(Int64(Int32.max), Int64((deadline - now) / 1_000_000) + 1))
            // Waits in slices, so a signal stops the run without waiting for a slow program.
            if !reader.hasBufferedLine, poll(&descriptor, 1, min(remaining, 50)) == 0 {
                if context.scheduler.isInterrupted {
                    throw context.error("'\(commandLine)' was stopped by a signal", element: element)
                }
                if remaining > 50 { continue }
                throw failure(
                    "'\(commandLine)' did not answer within \(DurationSyntax.format(timeout)) (element: \(element))")
            }
            // Checked on every line too: a program that answers without end keeps poll ready.
            if context.scheduler.isInterrupted {
                throw context.error("'\(commandLine)' was stopped by a signal", element: element)
            }
            var written = ""
            let line = try reader.nextLine { bytes -> Result<Value, JSONError>? in
                do throws(JSONError) { return .success(try JSONParser.parse(bytes)) } catch {
                    // Masked before it is cut: a secret cut short would no longer be recognised.
                    let whole = Secrets.shared.redact(String(decoding: bytes, as: UTF8.self))
                    written = String(whole.prefix(120)) + (whole.count > 120 ? "…" : "")
                    return .failure(error)
                }
            }
            guard let line else {
                // Its standard output closed: it is exiting, so this wait is short.
                let ended = process.wait()
                throw failure("'\(commandLine)' exited with \(ended) before answering (element: \(element))")
            }
            guard case .success(let answer) = line, case .object(let object) = answer else {
                if case .success(let answer) = line { written = answer.description }
                throw failure(
                    "'\(commandLine)' wrote a line that is not a JSON object of the exec protocol: \(written.debugDescription); "
                        + "standard output carries only the protocol's lines: write debug output to standard error")
            }
            if let value = object["emit"] {
                guard emitted.count < Self.maximumAnswers else {
                    throw failure(
                        "'\(commandLine)' answered one element with more than \(Self.maximumAnswers) values (element: \(element))"
                    )
                }
                emitted.append(value)
            } else if object["done"] != nil {
                return emitted
            } else if let message = object["error"] {
                try context.elementFailed(
                    context.error("'\(commandLine)': \(message.stringValue ?? message.description)", element: element),
                    element: element)
                return []
            } else {
                throw failure("'\(commandLine)' wrote \(answer), which is not {\"emit\"}, {\"done\"} or {\"error\"}")
            }
        }
    }

    /// Stops the program and what it started (SIGTERM, then SIGKILL 2 s later), never waiting.
    func stop() { process.stopGroup() }
}
