import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum OutputFormat: String, ParameterChoice {
    case jsonl, text
}
private enum Key {
    static let command = Parameter<[String]>(
        "command",
        doc:
            "The program and its arguments, as a list (no shell); a program path starting ./ is relative to the pipeline file.",
        example: "[python3, ./produce.py, --since, 1h]")
    static let format = Parameter<OutputFormat>(
        "format", default: .jsonl, doc: "jsonl: each line of its output parsed as JSON; text: each line as a string.")
}

extension BuiltinComponents {
    /// `exec: [program, args...]` (a source) — the lines a program writes.
    public static let execSource = ComponentSpec(
        name: "exec",
        summary: "Runs a program and emits each line of its standard output (JSON Lines, or text).",
        docs: """
            The program runs in the pipeline file's folder, with no shell: the command is a list, its \
            first item the program (looked up on PATH, or ./ relative to the pipeline file). Each line \
            of its standard output is an element as soon as it is written; its standard error is kept, \
            and the tail of it quoted if it fails. Its exit ends the stream: status 0 completes it, any \
            other status (or a signal) fails the pipeline with the status and the end of its standard \
            error. When the pipeline stops first (a take, a signal, a failure elsewhere) the program and \
            the programs it started (its process group) are sent SIGTERM, and SIGKILL 2 s later or when \
            rivulet exits. A line that is not JSON (format: jsonl) fails the pipeline, or with onError is \
            skipped or reported on NAME.errors. The reader stops reading while the pipeline is behind, \
            so a program that writes faster than the pipeline works blocks on its full pipe instead of \
            filling memory.
            """,
        parameters: [Key.command, Key.format],
        primary: Key.command,
        example: "source: { exec: { command: [python3, ./produce.py], format: jsonl } }",
        validate: { values, validation in
            if values[Key.command].isEmpty {
                validation.error(
                    "the command is empty: write the program and its arguments as a list", at: Key.command,
                    in: values)
            }
        },
        checkpointing: .unsupported(
            "a program's output cannot be read again from where it was: a resumed run would start it again and "
                + "read every line twice; have it write a file and read that with follow"),
        delivery: Delivery(
            .atMostOnce,
            "lines the program printed to a run that died are gone; a new run starts the program again"),
        elementErrors: true,
        factory: .source { parameters, context in
            var command = parameters[Key.command]
            for index in command.indices where command[index].hasPrefix("./") {
                command[index] = URL(fileURLWithPath: context.resolvePath(command[index])).standardizedFileURL.path
            }
            let json = parameters[Key.format] == .jsonl
            let commandLine = command.joined(separator: " ")
            let directory = URL(fileURLWithPath: context.baseDirectory).standardizedFileURL.path
            return PipelineSource { _ in
                LineSource.observable(json: json, what: "the output of '\(commandLine)'", context: context) {
                    try ProgramOutput.start(command: command, directory: directory, context: context)
                }
            }
        })
}

/// A program started for the `exec` source: its output's descriptor, and how its exit ends the stream.
enum ProgramOutput {
    static func start(command: [String], directory: String, context: ComponentContext) throws -> LineInput {
        let commandLine = command.joined(separator: " ")
        let process: ChildProcess
        do {
            // `env -C` runs the program in the pipeline's folder (posix_spawn has no portable chdir).
            // In a group of its own, stopped as a whole: a program that ignores SIGTERM, or one it
            // started, was left running under init.
            process = try ChildProcess(
                executable: "/usr/bin/env", arguments: ["-C", directory] + command, input: .null, ownGroup: true)
        } catch {
            throw context.error("cannot start '\(commandLine)': \(error)")
        }
        let stderrTail = StderrTail.reading(process.standardError)
        let name = context.componentName
        let location = context.location
        return LineInput(
            descriptor: process.standardOutput,
            end: {
                let ended = process.wait()
                if case .exited(0) = ended { return .completed }
                let tail = stderrTail.text
                var message = "'\(commandLine)' exited with \(ended)"
                if ended == .exited(127) && tail.contains("No such file") {
                    message += " (the program was not found)"
                }
                if !tail.isEmpty { message += "; its standard error ends with:\n\(tail)" }
                return .error(PipelineRuntimeError(message, component: name, location: location))
            },
            stop: { process.stopGroup() })
    }
}
