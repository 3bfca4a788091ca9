import ArgumentParser
import Components
import Foundation
@_spi(Host) import Pipeline

/// `rivulet top HOST:PORT`: a live view of a run started with `--metrics HOST:PORT`, from its
/// `/stats`: one row a component with its rates and totals, refreshed every second; `q` quits.
struct TopCommand: ParsableCommand, HandlesStopSignals {
    /// The full-screen view gives the terminal back before a signal ends it.
    var handlesStopSignals: Bool { !once && FileHandleOutput.standardOutput.isTerminal }

    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Watch a running pipeline (started with --metrics HOST:PORT): rates, totals and errors per component."
    )

    @Argument(help: ArgumentHelp("The address the run's --metrics serves.", valueName: "host:port"))
    var address: String

    @Argument(
        help: ArgumentHelp(
            "Only these components: places (ops.2), streams' names (orders) or globs ('streams.*.source', '*debounce*').",
            valueName: "component"))
    var only: [String] = []

    @Flag(help: "Print one view (rates over one second) and exit; the default when standard output is not a terminal.")
    var once = false

    func validate() throws {
        if HTTPServerAddress.parse(address) == nil {
            throw ValidationError("top expects HOST:PORT, such as 127.0.0.1:9464; got '\(address)'")
        }
    }

    func run() throws {
        guard let (host, port) = HTTPServerAddress.parse(address) else { throw ExitCode(2) }
        let fetch = { () throws -> TopView.Snapshot in
            let body = try StatsClient.get(host: host, port: port, path: "/stats")
            guard let snapshot = TopView.Snapshot(json: body) else {
                throw StatsClient.Failure("\(address)/stats did not answer with a run's stats")
            }
            return snapshot
        }
        do {
            if once || !FileHandleOutput.standardOutput.isTerminal {
                let first = try fetch()
                Thread.sleep(forTimeInterval: 1)
                let second = try fetch()
                let lines = TopView.render(
                    previous: first, current: second, address: address, only: only.map(PlacePattern.init))
                FileHandleOutput.standardOutput.write(lines.joined(separator: "\n") + "\n")
                return
            }
            // Said once the terminal has its own screen back.
            if let ended = try watch(fetch) { RunLog.info(ended) }
        } catch let failure as StatsClient.Failure {
            RunLog.error("error: \(failure.message)")
            throw ExitCode(1)
        }
    }

    /// Redraws the view every second until `q` (or Ctrl-C) is typed, or the run goes away (what
    /// to say then is returned).
    private func watch(_ fetch: () throws -> TopView.Snapshot) throws -> String? {
        var saved = termios()
        let hasTerminalInput = tcgetattr(0, &saved) == 0
        if hasTerminalInput {
            var raw = saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
            tcsetattr(0, TCSANOW, &raw)
        }
        let output = FileHandleOutput.standardOutput
        output.write("\u{1B}[?1049h\u{1B}[?25l")  // the alternate screen, no cursor
        defer {
            output.write("\u{1B}[?25h\u{1B}[?1049l")
            if hasTerminalInput { tcsetattr(0, TCSANOW, &saved) }
        }
        var previous: TopView.Snapshot?
        // SIGINT and SIGTERM stay blocked and are looked for once a redraw, so the terminal is
        // given back (the defer above) before the process exits with 128 + the signal.
        while true {
            if let signal = SignalWatcher.takePendingStopSignal() { throw ExitCode(128 + signal) }
            let current: TopView.Snapshot
            do {
                current = try fetch()
            } catch let failure as StatsClient.Failure {
                if previous != nil { return "the run at \(address) has ended (\(failure.message))" }
                throw failure
            }
            let lines = TopView.render(
                previous: previous, current: current, address: address, only: only.map(PlacePattern.init))
            output.write("\u{1B}[H\u{1B}[2J" + lines.joined(separator: "\r\n") + "\r\n\r\nq quits")
            previous = current
            // Waits a second for a key; q or Ctrl-C quits.
            var poller = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 1000) > 0 {
                var byte: UInt8 = 0
                if read(0, &byte, 1) == 1, byte == UInt8(ascii: "q") || byte == 3 { return nil }
            }
        }
    }
}

/// What `top` shows: a pure function of two snapshots of `/stats`.
enum TopView {
    /// One `/stats` answer.
    struct Snapshot {
        struct Component {
            let place: String
            let component: String
            let elementsIn: Int?
            let elementsOut: Int?
            let errors: Int
            let ended: Bool
        }

        let pipeline: String
        let ready: Bool
        let uptime: Double
        let components: [Component]

        init?(json: [UInt8]) {
            guard case .object(let object)? = try? JSONParser.parse(json),
                case .string(let pipeline)? = object["pipeline"], case .array(let items)? = object["components"]
            else { return nil }
            self.pipeline = pipeline
            ready = object["ready"] == .bool(true)
            uptime = object["uptimeSeconds"]?.doubleValue ?? 0
            components = items.compactMap { item in
                guard case .object(let fields) = item, case .string(let place)? = fields["place"],
                    case .string(let component)? = fields["component"]
                else { return nil }
                return Component(
                    place: place, component: component, elementsIn: fields["in"]?.intValue,
                    elementsOut: fields["out"]?.intValue, errors: fields["errors"]?.intValue ?? 0,
                    ended: fields["ended"] == .bool(true))
            }
        }
    }

    /// The view: a title line, a header, one row a component (rates between the two snapshots);
    /// with `only`, the components those patterns mean.
    static func render(previous: Snapshot?, current: Snapshot, address: String, only: [PlacePattern] = [])
        -> [String]
    {
        let seconds = previous.map { current.uptime - $0.uptime } ?? 0
        func rate(_ now: Int?, _ before: Int?) -> String {
            guard let now else { return "-" }
            guard let before, seconds > 0 else { return "…" }
            return String(format: "%.1f", Double(now - before) / seconds)
        }
        let title =
            "rivulet top — \(current.pipeline) at \(address) — \(current.ready ? "ready" : "connecting") — up "
            + String(format: "%.1fs", current.uptime)
        var rows = [["PLACE", "COMPONENT", "IN/s", "OUT/s", "IN", "OUT", "ERRORS", "STATE"]]
        for component in current.components
        where only.isEmpty
            || only.contains(where: { $0.matches(place: component.place, component: component.component) })
        {
            let before = previous?.components.first { $0.place == component.place }
            rows.append([
                component.place, component.component, rate(component.elementsIn, before?.elementsIn),
                rate(component.elementsOut, before?.elementsOut), component.elementsIn.map(String.init) ?? "-",
                component.elementsOut.map(String.init) ?? "-", String(component.errors),
                component.ended ? "ended" : "running",
            ])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            row.enumerated().map { column, cell in
                // Names to the left, numbers to the right.
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column < 2 || column == 7 ? cell + pad : pad + cell
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        return [title, ""] + lines
    }
}
