import Components
import Foundation
@_spi(Host) @_spi(Components) import Pipeline
import Synchronization
@_spi(Host) import Tooling

/// What `run --ui ADDRESS` serves besides `/stats` and `/tap`: one page with nothing from outside
/// (its script is `/ui.js`, its drawing `/graph.svg`), each node's parameters as written (secrets
/// masked) at `/node?place=`, and `/events`, a stream of server-sent events with the run's
/// counts and its `table` sinks' rows, twice a second. Under `--watch` a new version replaces
/// the drawing (`replace`); a page opened before shows it when reloaded.
final class LiveView: Sendable {
    private struct Drawing {
        let title: String
        let svg: [UInt8]
        let nodes: [String: [UInt8]]
    }

    private let drawing: Mutex<Drawing>
    let tables: LiveTables

    init(_ pipeline: ValidatedPipeline, title: String, tables: LiveTables) {
        drawing = Mutex(Self.draw(pipeline, title: title))
        self.tables = tables
    }

    var title: String { drawing.withLock { $0.title } }
    var svg: [UInt8] { drawing.withLock { $0.svg } }
    var nodes: [String: [UInt8]] { drawing.withLock { $0.nodes } }

    /// Shows a new version of the pipeline.
    func replace(_ pipeline: ValidatedPipeline, title: String) {
        let next = Self.draw(pipeline, title: title)
        drawing.withLock { $0 = next }
    }

    private static func draw(_ pipeline: ValidatedPipeline, title: String) -> Drawing {
        let graph = PipelineGraph(pipeline)
        let svg = Array(Secrets.shared.redact(graph.svg(title: title)).utf8)
        var nodes: [String: [UInt8]] = [:]
        for detail in graph.details {
            var object = JSONObject()
            object["place"] = .string(detail.place)
            object["component"] = .string(detail.component)
            object["label"] = .string(Secrets.shared.redact(detail.label))
            object["parameters"] = .string(Secrets.shared.redact(detail.parameters))
            object["location"] = .string(detail.location)
            nodes[detail.place] = Array(ReportFormat.text(.object(object)).utf8)
        }
        return Drawing(title: title, svg: svg, nodes: nodes)
    }

    /// The tables as JSON: `[{place, columns, rows}]`.
    func tablesJSON() -> Value {
        .array(
            tables.snapshot.map { table in
                var object = JSONObject()
                object["place"] = .string(table.place)
                object["columns"] = .array(table.columns.map(Value.string))
                object["rows"] = .array(table.rows.map { .array($0.map(Value.string)) })
                return .object(object)
            })
    }

    /// The page: the graph, the selected node's panel, the tables, with `initial` (the run's
    /// stats and tables as JSON) in it, so that it shows the run at once, before its script has
    /// fetched anything (a screenshot taken at load shows rates, not "connecting…"). No resource
    /// from elsewhere.
    func page(initial: Value) -> [UInt8] {
        var state: [UInt8] = []
        JSONSerializer.write(initial, to: &state)
        // Inside <script>, "</" would end it early.
        let json = String(decoding: state, as: UTF8.self).replacingOccurrences(of: "</", with: "<\\/")
        // Inline in HTML an SVG needs no namespace (and the page names no address elsewhere).
        var drawing = String(decoding: svg, as: UTF8.self).replacingOccurrences(
            of: " xmlns=\"http://www.w3.org/2000/svg\"", with: "")
        // Shrunk to fit the window, but never below 75% of its size, where its 11-13 px text stays
        // legible: a long chain of components scrolls sideways instead of becoming a thin strip.
        if let match = drawing.firstMatch(of: /<svg [^>]* width="([0-9.]+)"/), let width = Double(match.1) {
            drawing = drawing.replacing(
                "<svg ", with: "<svg style=\"min-width: \(Int(width * 0.75))px\" ", maxReplacements: 1)
        }
        return Array(
            """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(XMLText.escape(title)) — rivulet</title>
            <style>\(Self.style)</style>
            </head>
            <body>
            <header><h1>\(XMLText.escape(title))</h1><span id="status" role="status">connecting…</span></header>
            <main>
            <section id="graph" aria-label="the pipeline's graph: Tab to a node, Enter to open it">\(drawing)</section>
            <aside id="panel" hidden>
              <h2 id="node-title"></h2>
              <p id="node-location"></p>
              <pre id="node-parameters"></pre>
              <div class="samples-head"><h3>Elements passing it</h3><button id="pause" type="button">Pause</button></div>
              <ol id="samples" aria-live="polite"></ol>
            </aside>
            </main>
            <section id="tables" aria-label="table sinks"></section>
            <script id="initial" type="application/json">\(json)</script>
            <script src="/ui.js"></script>
            </body>
            </html>

            """.utf8)
    }

    static let style = """
        :root { color-scheme: light dark; --fg: #1f2328; --muted: #656d76; --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de; --accent: #0969da; }
        @media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #8b949e; --bg: #0d1117; --panel: #161b22; --line: #30363d; --accent: #58a6ff; } }
        body { margin: 0; font: 14px system-ui, sans-serif; color: var(--fg); background: var(--bg); }
        header { display: flex; gap: 1em; align-items: baseline; padding: 8px 16px; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
        h1 { font-size: 18px; margin: 0; }
        #status { color: var(--muted); }
        main { display: flex; flex-wrap: wrap; gap: 12px; padding: 12px 16px; }
        #graph { flex: 1 1 100%; overflow: auto; min-width: 0; }
        #graph svg { max-width: 100%; height: auto; }
        .node { cursor: pointer; }
        .node:focus { outline: none; }
        aside { flex: 1 1 420px; min-width: 260px; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; }
        aside h2 { font-size: 15px; margin: 4px 0; }
        #node-location { color: var(--muted); margin: 0 0 6px; }
        pre, ol { font: 12px ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
        ol { max-height: 40vh; overflow: auto; padding-left: 2.5em; }
        .samples-head { display: flex; justify-content: space-between; align-items: center; }
        button { font: inherit; }
        #tables { padding: 0 16px 16px; overflow-x: auto; display: flex; flex-wrap: wrap; gap: 16px; }
        table { border-collapse: collapse; margin: 8px 0 16px; }
        th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; }
        th { background: var(--panel); }
        caption { text-align: left; color: var(--muted); white-space: nowrap; }
        """

    /// The page's script: draws the SVG, follows `/events`, opens a node on click or Enter.
    static let script = Array(
        """
        "use strict";
        const graph = document.getElementById("graph");
        const panel = document.getElementById("panel");
        const samples = document.getElementById("samples");
        const pause = document.getElementById("pause");
        const status = document.getElementById("status");
        let previous = null, selected = null, reader = null, paused = false;
        const quiet = {};

        function rate(value) { return value >= 100 ? Math.round(value) + "/s" : value.toFixed(1) + "/s"; }

        // A metric's value as top shows it: a time in UTC, a duration, bytes, yes or no.
        function shown(value, how) {
          if (typeof value !== "number") return String(value);
          if (how === "time") return new Date(value).toISOString();
          if (how === "flag") return value ? "yes" : "no";
          if (how === "bytes") return value < 1024 ? value + "B" : value < 1048576 ? (value / 1024).toFixed(1) + "KiB" : (value / 1048576).toFixed(1) + "MiB";
          if (how === "duration") {
            const s = Math.floor(value / 1000), two = n => String(n).padStart(2, "0");
            if (s < 60) return (value / 1000).toFixed(1) + "s";
            if (s < 3600) return Math.floor(s / 60) + "m" + two(s % 60) + "s";
            if (s < 86400) return Math.floor(s / 3600) + "h" + two(Math.floor(s % 3600 / 60)) + "m";
            return Math.floor(s / 86400) + "d" + two(Math.floor(s % 86400 / 3600)) + "h";
          }
          return String(value);
        }

        function update(stats) {
          const now = stats.uptimeSeconds;
          status.textContent = (stats.ready ? "ready" : "connecting") + " — up " + now.toFixed(0) + "s";
          for (const c of stats.components) {
            const before = previous && previous.components.find(p => p.place === c.place);
            const seconds = previous ? Math.max(now - previous.uptimeSeconds, 0.001) : 0;
            const count = c.out ?? c.in ?? 0;
            // The first snapshot has no earlier one: its rate is the average since the start.
            const out = before && seconds ? (count - (before.out ?? before.in ?? 0)) / seconds
              : (!previous && now > 0 ? count / now : 0);
            for (const edge of graph.querySelectorAll('g.edge:not(.side)[data-from="' + CSS.escape(c.place) + '"] .rate')) {
              edge.textContent = rate(out);
            }
            // A side stream (NAME.late, NAME.errors) carries a few of its node's elements: its
            // rate is what the node it feeds takes in, not what its own node sends on.
            const taken = c.in ?? 0;
            const inRate = before && seconds ? (taken - (before.in ?? 0)) / seconds
              : (!previous && now > 0 ? taken / now : 0);
            for (const edge of graph.querySelectorAll('g.edge.side[data-to="' + CSS.escape(c.place) + '"] .rate')) {
              edge.textContent = rate(inRate);
            }
            const node = graph.querySelector('g.node[data-place="' + CSS.escape(c.place) + '"]');
            if (!node) continue;
            node.classList.toggle("error", c.errors > 0);
            const moved = !before || before.out !== c.out || before.in !== c.in;
            quiet[c.place] = moved ? now : (quiet[c.place] ?? now);
            node.classList.toggle("stalled", !c.ended && now - quiet[c.place] > 5);
            node.dataset.out = c.out;
          }
          previous = stats;
          drawTables(stats.tables || [], stats.components);
        }

        function drawTables(tables, components) {
          const host = document.getElementById("tables");
          host.replaceChildren();
          for (const t of tables) {
            const table = document.createElement("table");
            table.dataset.place = t.place;
            table.createCaption().textContent = "table sink at " + t.place + ", newest first";
            const head = table.createTHead().insertRow();
            for (const column of t.columns) { const th = document.createElement("th"); th.textContent = column; head.appendChild(th); }
            const body = table.createTBody();
            for (const row of t.rows.slice().reverse()) { const tr = body.insertRow(); for (const cell of row) tr.insertCell().textContent = cell; }
            host.appendChild(table);
          }
          // Each event-time stream: its watermark, how far behind the wall clock, what it holds.
          for (const c of components || []) {
            const v = c.values || {};
            if (!("watermark_ms" in v)) continue;
            const table = document.createElement("table");
            table.dataset.place = c.place;
            table.dataset.label = "event time";
            table.createCaption().textContent = "event time at " + c.place;
            const head = table.createTHead().insertRow();
            const titles = ["WATERMARK", "BEHIND", "WAITING", "WINDOWS", "KEYS", "LATE"];
            for (const title of titles) { const th = document.createElement("th"); th.textContent = title; head.appendChild(th); }
            const cells = [v.watermark_ms ? shown(v.watermark_ms, "time") : "not started",
              v.watermark_ms ? shown(v.watermark_behind_ms, "duration") : "", v.event_time_waiting,
              v.event_time_windows_open, v.event_time_keys_held, v.elements_late_total || 0];
            const tr = table.createTBody().insertRow();
            for (const cell of cells) tr.insertCell().textContent = cell === undefined ? "" : String(cell);
            host.appendChild(table);
          }
          // What a component counts by a label (a group's partitions), one table a label, under
          // the same plain titles as top.
          for (const c of components || []) {
            for (const t of c.byLabel || []) {
              const table = document.createElement("table");
              table.dataset.place = c.place;
              table.dataset.label = t.label;
              table.createCaption().textContent = c.component + " at " + c.place + ", by " + t.label;
              const head = table.createTHead().insertRow();
              for (const column of [t.label.toUpperCase()].concat(t.titles || t.columns)) { const th = document.createElement("th"); th.textContent = column; head.appendChild(th); }
              const body = table.createTBody();
              for (const row of t.rows) {
                const tr = body.insertRow();
                row.forEach((cell, i) => {
                  const how = i > 0 && t.shown ? t.shown[i - 1] : "number";
                  // A watermark of 0 is one not known yet (no element).
                  tr.insertCell().textContent = cell === null || (how === "time" && cell === 0) ? "" : shown(cell, how);
                });
              }
              host.appendChild(table);
            }
          }
        }

        async function open(node) {
          for (const other of graph.querySelectorAll("g.node.selected")) other.classList.remove("selected");
          node.classList.add("selected");
          selected = node.dataset.place;
          if (reader) { reader.cancel(); reader = null; }
          samples.replaceChildren();
          panel.hidden = false;
          const detail = await (await fetch("/node?place=" + encodeURIComponent(selected))).json();
          document.getElementById("node-title").textContent = detail.component + " — " + detail.place;
          document.getElementById("node-location").textContent = detail.location;
          document.getElementById("node-parameters").textContent = detail.parameters || "(no parameters)";
          const response = await fetch("/tap?place=" + encodeURIComponent(selected));
          reader = response.body.getReader();
          const decoder = new TextDecoder();
          let pending = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            pending += decoder.decode(value, { stream: true });
            const lines = pending.split("\\n");
            pending = lines.pop();
            if (paused) continue;
            for (const line of lines) {
              if (!line || line.charCodeAt(0) === 0x1e) continue;
              const item = document.createElement("li");
              item.textContent = line;
              samples.appendChild(item);
              while (samples.children.length > 50) samples.firstElementChild.remove();
            }
          }
        }

        pause.addEventListener("click", () => {
          paused = !paused;
          pause.textContent = paused ? "Resume" : "Pause";
          pause.setAttribute("aria-pressed", String(paused));
        });

        // The drawing and the first snapshot came with the page: shown at once, then followed.
        for (const node of graph.querySelectorAll("g.node")) {
          node.setAttribute("role", "button");
          node.addEventListener("click", () => open(node));
          node.addEventListener("keydown", event => {
            if (event.key === "Enter" || event.key === " ") { event.preventDefault(); open(node); }
          });
        }
        update(JSON.parse(document.getElementById("initial").textContent));
        const events = new EventSource("/events");
        events.onmessage = message => update(JSON.parse(message.data));
        events.onerror = () => { status.textContent = "the run has ended or cannot be reached"; };

        """.utf8)
}
