import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

private enum Key {
    static let label = Parameter<String>(
        "label", default: "> ", doc: "What is shown before the text.", example: "\"Search: \"")
}

extension BuiltinComponents {
    /// `prompt` — an interactive input line, like a search bar.
    public static let prompt = ComponentSpec(
        name: "prompt",
        summary: "An interactive terminal input: shows what is typed and emits the whole text on every keystroke.",
        docs: """
            Like a search bar's text: each keystroke (or backspace) emits the full current text. Ctrl-D \
            ends the input. The terminal is put in cbreak mode (no line editing, no echo; Ctrl-C still \
            stops the pipeline) and restored when the pipeline ends, fails or is stopped by a signal. It \
            needs standard input to be a terminal and the real clock.
            """,
        parameters: [Key.label],
        primary: Key.label,
        example: "source: { prompt: \"Search: \" }",
        checkpointing: .unsupported("what a person typed cannot be asked for again after a restart"),
        delivery: Delivery(.atMostOnce, "what was typed into a run that died is gone"),
        factory: .source { parameters, context in
            let label = parameters[Key.label]
            return PipelineSource { _ in PromptInput.observable(label: label, context: context) }
        })
}

enum PromptInput {
    static func observable(label: String, context: ComponentContext) -> Observable<Value> {
        Observable { observer, lifetime in
            guard let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler else {
                observer.on(.error(context.error("prompt needs the real clock (not --clock virtual)")))
                return
            }
            guard isatty(0) == 1 else {
                observer.on(
                    .error(context.error("prompt needs a terminal: standard input is not one (use stdin or events)")))
                return
            }
            var original = termios()
            tcgetattr(0, &original)
            var raw = original
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
                bytes[Int(VMIN)] = 1
                bytes[Int(VTIME)] = 0
            }
            tcsetattr(0, TCSANOW, &raw)
            let saved = original
            lifetime.onDispose {
                var restore = saved
                tcsetattr(0, TCSANOW, &restore)
            }
            let output = context.shared(StandardOutput.self) { StandardOutput() }
            let screen = context.shared(Screen.self) { Screen(output: output) }
            screen.setPrompt(label + "▌")
            let target = SchedulerBound((observer, lifetime, screen))
            let thread = Thread {
                var line = PromptLine()
                var byte: UInt8 = 0
                func publish(_ event: Event<Value>, display: String) {
                    let bound = SchedulerBound(event)
                    scheduler.enqueue {
                        let (observer, lifetime, screen) = target.value
                        if lifetime.isDisposed { return }
                        screen.setPrompt(display)
                        observer.on(bound.value)
                        if bound.value.isStopEvent { lifetime.dispose() }
                    }
                }
                while read(0, &byte, 1) == 1 {
                    switch line.feed(byte) {
                    case .unchanged: continue
                    case .ended:
                        publish(.completed, display: label + line.text)
                        return
                    case .typed(let text): publish(.next(.string(text)), display: label + text + "▌")
                    }
                }
                publish(.completed, display: label + line.text)
            }
            thread.start()
        }
    }
}

/// The line being typed at the prompt, fed one byte at a time: printable UTF-8 is appended (a
/// character split over several bytes once whole), backspace removes the last character, escape
/// sequences (arrow keys and the like) and line breaks are skipped, Ctrl-D ends the input.
struct PromptLine {
    /// What a byte did to the line.
    enum Change: Equatable {
        /// Nothing to show (a byte of an escape sequence or of an unfinished character).
        case unchanged
        /// The whole text now (backspace on an empty line says so too).
        case typed(String)
        /// Ctrl-D: the input is over.
        case ended
    }

    private(set) var text = ""
    private var pending: [UInt8] = []
    /// 1 after ESC, 2 inside a CSI sequence (`ESC [`), 0 outside.
    private var escape = 0

    mutating func feed(_ byte: UInt8) -> Change {
        if escape > 0 {
            escape = (escape == 1 && byte == UInt8(ascii: "[")) ? 2 : ((byte >= 0x40 && byte <= 0x7E) ? 0 : escape)
            return .unchanged
        }
        switch byte {
        case 0x1B:
            escape = 1
            return .unchanged
        case 0x04:
            return .ended
        case 0x7F, 0x08:
            if !text.isEmpty { text.removeLast() }
        case 0x0A, 0x0D, 0x09:
            return .unchanged
        default:
            guard byte >= 0x20 else { return .unchanged }
            pending.append(byte)
            guard let decoded = String(validating: pending, as: UTF8.self) else {
                if pending.count > 4 { pending.removeAll() }
                return .unchanged
            }
            pending.removeAll()
            text += decoded
        }
        return .typed(text)
    }
}
