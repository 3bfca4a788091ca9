import Foundation
@_spi(Host) import Pipeline
import Reactive

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
                var text = ""
                var pending: [UInt8] = []
                var escape = 0
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
                    if escape > 0 {
                        // Skip the rest of an escape sequence (arrow keys and the like).
                        escape =
                            (escape == 1 && byte == UInt8(ascii: "["))
                            ? 2 : ((byte >= 0x40 && byte <= 0x7E) ? 0 : escape)
                        continue
                    }
                    switch byte {
                    case 0x1B:
                        escape = 1
                        continue
                    case 0x04:
                        publish(.completed, display: label + text)
                        return
                    case 0x7F, 0x08:
                        if !text.isEmpty { text.removeLast() }
                    case 0x0A, 0x0D, 0x09:
                        continue
                    default:
                        guard byte >= 0x20 else { continue }
                        pending.append(byte)
                        guard let decoded = String(validating: pending, as: UTF8.self) else {
                            if pending.count > 4 { pending.removeAll() }
                            continue
                        }
                        pending.removeAll()
                        text += decoded
                    }
                    publish(.next(.string(text)), display: label + text + "▌")
                }
                publish(.completed, display: label + text)
            }
            thread.start()
        }
    }
}
