import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum LineFormat: String, ParameterChoice {
    case lines, jsonl, csv
}
private enum Key {
    static let format = Parameter<LineFormat>(
        "format", default: .lines,
        doc: "lines: each line as a string; jsonl: each line parsed as JSON; csv: each line a CSV record.")
    static let header = CSVParameters.header
    static let numbers = CSVParameters.numbers
    static let separator = CSVParameters.separator
}

extension BuiltinComponents {
    /// `stdin` — the lines of standard input.
    public static let stdin = ComponentSpec(
        name: "stdin",
        summary: "Emits each line of standard input, as text or parsed as JSON; completes at the end of input.",
        docs: """
            On the real clock, lines are read on a thread of their own and delivered to the pipeline as \
            they come; on the virtual clock, all of standard input is read at subscription. With \
            format: csv each line is a record, read as the file source reads CSV (the first line the \
            header, unless header: false).
            """,
        parameters: [Key.format, Key.header, Key.numbers, Key.separator],
        primary: Key.format,
        example: "source: stdin",
        validate: { values, validation in CSVParameters.check(values, validation) },
        checkpointing: .unsupported(
            "standard input cannot be read again: lines a killed run had read are gone; read a file (with follow) instead"
        ),
        delivery: Delivery(.atMostOnce, "lines read by a run that died are not read again"),
        elementErrors: true,
        factory: .source { parameters, context in
            let json = parameters[Key.format] == .jsonl
            let csv = parameters[Key.format] == .csv ? CSVParameters.records(parameters) : nil
            return PipelineSource { _ in
                LineSource.observable(json: json, csv: csv, what: "standard input", context: context) {
                    LineInput(descriptor: 0, end: { .completed }, stop: {})
                }
            }
        })
}
