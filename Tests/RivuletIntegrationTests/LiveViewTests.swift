import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// `run --ui`: the live view in a real headless Chromium (through chromedriver): every node of
/// the graph, an edge's rate changing, a node opened with its parameters and the elements passing
/// it, a table sink as an HTML table, keyboard use; what it shows is escaped; its server answers
/// nothing but its own routes.
final class LiveViewTests: BinaryTestCase {
    /// The example pipeline made for the live view: even numbers and their squares, a table sink.
    private var squares: String {
        get throws {
            try String(
                contentsOf: Repository.root.appendingPathComponent("Pipelines/live-squares.yaml"),
                encoding: .utf8)
        }
    }

    /// Starts `pipeline` with `--ui` on a free port; returns once the page answers.
    private func startViewed(_ pipeline: String, name: String, environment: [String: String] = [:]) throws -> (
        ChildProcess, Int
    ) {
        let file = directory.appendingPathComponent("\(name).yaml").path
        try pipeline.write(toFile: file, atomically: true, encoding: .utf8)
        let port = freeLoopbackPort()
        let process = try startRivulet(
            ["run", file, "--ui", "127.0.0.1:\(port)"], environment: environment, output: .null, error: .pipe)
        let deadline = Date(timeIntervalSinceNow: 10)
        while LoopbackHTTP.get(port, "/stats") == nil && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        return (process, port)
    }

    func testTheLiveViewShowsTheGraphRatesElementsAndTables() throws {
        guard WebDriver.isInstalled else { throw XCTSkip("chromium and chromedriver are not installed") }
        let (run, port) = try startViewed(try squares, name: "squares")
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let browser = try WebDriver()
        try browser.open("http://127.0.0.1:\(port)/")
        let places = ["streams.numbers.source", "streams.numbers.ops.0", "streams.numbers.ops.1", "sinks.0", "sinks.1"]
        try browser.waitUntil("the graph drawn") { "return document.querySelectorAll('#graph g.node').length === 5;" }
        let drawn = try browser.run(
            "return Array.from(document.querySelectorAll('#graph g.node')).map(n => n.dataset.place);")
        XCTAssertEqual((drawn as? [String])?.sorted(), places.sorted())

        // The rate on the edge out of the map: the run's (about 10/s), and live. A steady run shows
        // the same text at every update, so the test blanks it and waits for the next update.
        let edge = "document.querySelector('g.edge[data-from=\"streams.numbers.ops.1\"] .rate')"
        try browser.waitUntil("a rate shown") {
            "const t = \(edge).textContent; return /^[0-9.]+\\/s$/.test(t) && parseFloat(t) > 0;"
        }
        _ = try browser.run("\(edge).textContent = '';")
        try browser.waitUntil("the rate updated") {
            "const t = \(edge).textContent; return /^[0-9.]+\\/s$/.test(t) && parseFloat(t) > 0;"
        }
        let shown = try XCTUnwrap(try browser.run("return \(edge).textContent;") as? String)
        let perSecond = try XCTUnwrap(Double(shown.dropLast(2)), shown)
        XCTAssert((2...30).contains(perSecond), "the map's rate is about 10/s: \(shown)")

        // Opening a node: its parameters as written and the elements passing it, as they pass.
        _ = try browser.run(
            "document.querySelector('g.node[data-place=\"streams.numbers.ops.1\"]')"
                + ".dispatchEvent(new MouseEvent('click', {bubbles: true}));")
        try browser.waitUntil("elements arrive") { "return document.querySelectorAll('#samples li').length >= 3;" }
        XCTAssertEqual(
            try browser.run("return document.getElementById('node-parameters').textContent;") as? String,
            "{n: ., square: . * .}")
        let sampled = try XCTUnwrap(
            try browser.run("return Array.from(document.querySelectorAll('#samples li')).map(l => l.textContent);")
                as? [String])
        for line in sampled {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Int]
            XCTAssertEqual(object?["square"], (object?["n"] ?? -1) * (object?["n"] ?? -1), line)
        }
        // Paused, nothing more is added.
        _ = try browser.run("document.getElementById('pause').click();")
        Thread.sleep(forTimeInterval: 0.3)
        let paused = try browser.run("return document.querySelectorAll('#samples li').length;") as? Int
        Thread.sleep(forTimeInterval: 0.6)
        XCTAssertEqual(try browser.run("return document.querySelectorAll('#samples li').length;") as? Int, paused)
        _ = try browser.run("document.getElementById('pause').click();")

        // The table sink's rows, as an HTML table that grows.
        try browser.waitUntil("the table") {
            "return document.querySelectorAll('#tables table[data-place=\"sinks.0\"] tbody tr').length >= 3;"
        }
        XCTAssertEqual(
            try browser.run(
                "return Array.from(document.querySelectorAll('#tables th')).map(h => h.textContent);") as? [String],
            ["n", "square"])

        // The keyboard: a node takes the focus and Enter opens it.
        _ = try browser.run(
            "const node = document.querySelector('g.node[data-place=\"streams.numbers.ops.0\"]'); node.focus(); "
                + "node.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));")
        try browser.waitUntil("the filter opened") {
            "return document.getElementById('node-title').textContent === 'filter — streams.numbers.ops.0';"
        }
        XCTAssertEqual(
            try browser.run("return document.querySelector('g.node[data-place=\"streams.numbers.ops.0\"]').tabIndex;")
                as? Int, 0)
        try browser.waitUntil("the filter's elements") {
            "return document.querySelectorAll('#samples li').length >= 5;"
        }

        let image = try browser.screenshot()
        XCTAssertEqual(Array(image.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "a PNG")
        // scripts/screenshot-live-view.sh sets this to regenerate the README's picture.
        if let path = ProcessInfo.processInfo.environment["RIVULET_SCREENSHOT"] {
            try image.write(to: URL(fileURLWithPath: path))
        }

        // Dark: the page and the drawing both change colours (the text stays readable on them).
        let colours =
            "return [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color, "
            + "getComputedStyle(document.querySelector('g.node rect')).fill, "
            + "getComputedStyle(document.querySelector('g.node .label')).fill];"
        XCTAssertEqual(
            try browser.run(colours) as? [String],
            ["rgb(255, 255, 255)", "rgb(31, 35, 40)", "rgb(246, 248, 250)", "rgb(31, 35, 40)"])
        try browser.emulateColorScheme("dark")
        XCTAssertEqual(
            try browser.run(colours) as? [String],
            ["rgb(13, 17, 23)", "rgb(230, 237, 243)", "rgb(22, 27, 34)", "rgb(230, 237, 243)"])
        try browser.emulateColorScheme("light")

        // A narrow window: the page does not overflow (the graph scrolls in its own box) and the
        // node's panel goes under the graph.
        try browser.resize(width: 420, height: 800)
        try browser.waitUntil("the narrow layout") {
            "const graph = document.getElementById('graph').getBoundingClientRect(); "
                + "const panel = document.getElementById('panel').getBoundingClientRect(); "
                + "return window.innerWidth < 500 && document.documentElement.scrollWidth <= window.innerWidth "
                + "&& panel.top >= graph.bottom;"
        }
    }

    /// A runner of a group shows, beside its graph, each partition: held here or not, and how
    /// many of its messages wait to be read.
    func testAGroupRunnersPartitionsAreATable() throws {
        guard WebDriver.isInstalled else { throw XCTSkip("chromium and chromedriver are not installed") }
        let server = try NATSServer(storeDirectory: directory.appendingPathComponent("js").path)
        defer { server.stop() }
        let publish = directory.appendingPathComponent("publish.yaml").path
        try """
        source: { events: [{ at: 0ms, next: { customer: a } }, { at: 1ms, complete: true }] }
        sink: { nats: { url: "\(server.url)", subject: orders, partitionBy: .customer, partitions: 4, stream: ORDERS, create: true } }
        """.write(toFile: publish, atomically: true, encoding: .utf8)
        XCTAssertEqual(try runRivulet(["run", publish]).status, 0)
        let (run, port) = try startViewed(
            """
            source: { nats: { url: "\(server.url)", stream: ORDERS, subject: orders, group: g, partitions: 4, leaseTimeout: 3s } }
            sink: { file: \(directory.appendingPathComponent("out.jsonl").path) }
            """, name: "group")
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let browser = try WebDriver()
        try browser.open("http://127.0.0.1:\(port)/")
        let table = "document.querySelector('#tables table[data-place=\"source\"][data-label=\"partition\"]')"
        try browser.waitUntil("the partitions' table") {
            "const t = \(table); return t !== null && t.tBodies[0].rows.length === 4 "
                + "&& t.tHead.rows[0].cells.length === 4 "
                + "&& Array.from(t.tBodies[0].rows).every(r => r.cells[1].textContent === 'yes');"
        }
        XCTAssertEqual(
            try browser.run("return Array.from(\(table).tHead.rows[0].cells).map(c => c.textContent);") as? [String],
            ["PARTITION", "HELD", "PENDING", "UNACKED"])
        XCTAssertEqual(
            try browser.run("return Array.from(\(table).tBodies[0].rows).map(r => r.cells[1].textContent);")
                as? [String], ["yes", "yes", "yes", "yes"])
        XCTAssertEqual(
            try browser.run("return Array.from(\(table).tBodies[0].rows).map(r => r.cells[0].textContent);")
                as? [String], ["0", "1", "2", "3"])
        run.send(SIGTERM)
        XCTAssertEqual(run.communicate(input: [], timeout: 30).termination.status, 143)
    }

    /// An event-time stream's table: its watermark as a UTC time, how far behind the wall clock,
    /// the elements waiting, the windows and keys its aggregate holds, the late ones.
    func testAnEventTimeStreamsWatermarkAndWhatItHoldsAreATable() throws {
        guard WebDriver.isInstalled else { throw XCTSkip("chromium and chromedriver are not installed") }
        // As in PartitionMetricsTests: the watermark 9 s after 1,000,000,000,000 ms, ten elements
        // waiting, one window with keys 2, 0, 1 open; one element late.
        let lines = (0..<20).map { #"{"t":\#(1_000_000_000_000 + $0 * 1000),"k":\#($0 % 3)}"# } + [#"{"t":0,"k":0}"#]
        try (lines.joined(separator: "\n") + "\n").write(
            to: directory.appendingPathComponent("times.jsonl"), atomically: true, encoding: .utf8)
        let (run, port) = try startViewed(
            """
            source: { file: { path: \(directory.appendingPathComponent("times.jsonl").path), follow: true, poll: 10ms } }
            eventTime: { time: .t, maxDelay: 10s }
            ops:
              - map: .
              - aggregate: { by: .k, every: 5s, fields: { n: count } }
            sink: { file: \(directory.appendingPathComponent("out.jsonl").path) }
            """, name: "timed")
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let browser = try WebDriver()
        try browser.open("http://127.0.0.1:\(port)/")
        let table = "document.querySelector('#tables table[data-label=\"event time\"]')"
        try browser.waitUntil("the event-time table") {
            "const t = \(table); return t !== null && t.tBodies[0].rows[0].cells[3].textContent === '1' "
                + "&& t.tBodies[0].rows[0].cells[5].textContent === '1';"
        }
        XCTAssertEqual(
            try browser.run("return Array.from(\(table).tHead.rows[0].cells).map(c => c.textContent);") as? [String],
            ["WATERMARK", "BEHIND", "WAITING", "WINDOWS", "KEYS", "LATE"])
        let cells = try XCTUnwrap(
            try browser.run("return Array.from(\(table).tBodies[0].rows[0].cells).map(c => c.textContent);")
                as? [String])
        XCTAssertEqual(cells[0], "2001-09-09T01:46:49.000Z", "\(cells)")
        XCTAssertTrue(cells[1].hasSuffix("h"), "days and hours behind: \(cells)")
        XCTAssertEqual(Array(cells[2...]), ["10", "1", "3", "1"])
        run.send(SIGTERM)
        XCTAssertEqual(run.communicate(input: [], timeout: 30).termination.status, 143)
    }

    func testAFreshlyOpenedPageShowsTheRunAtOnceAndAllOfItAt1280By800() throws {
        guard WebDriver.isInstalled else { throw XCTSkip("chromium and chromedriver are not installed") }
        // A wide graph: long labels in four columns.
        let pipeline = """
            name: wide
            streams:
              numbers:
                source: { interval: 20ms }
                ops:
                  - filter: ". % 2 == 0 && . >= 0 && . < 1000000000 && len(string(.)) < 20 && . != -1"
                  - map: { number: ., square: . * ., cube: . * . * ., text: "'number ' + string(.) + ' squared'" }
                  - map: { n: .number, square: .square, description: .text, parity: ".number % 4 == 0 ? 'four' : 'two'" }
            sinks:
              - { stream: numbers, table: { columns: [n, square] } }
              - { stream: numbers, file: { path: "\(directory.appendingPathComponent("wide.jsonl").path)" } }
            """
        let (run, port) = try startViewed(pipeline, name: "wide")
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        Thread.sleep(forTimeInterval: 1)
        let browser = try WebDriver(width: 1280, height: 800)
        try browser.open("http://127.0.0.1:\(port)/")
        // What the page shows when it has loaded, before any event came: the screenshot's state.
        let image = try browser.screenshot()
        XCTAssertEqual(Array(image.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "a PNG")
        let shown = try XCTUnwrap(
            try browser.run(
                "const rate = document.querySelector('g.edge[data-from=\"streams.numbers.ops.1\"] .rate').textContent; "
                    + "const sink = Array.from(document.querySelectorAll('#graph g.node')).map(n => n.getBoundingClientRect().right); "
                    + "const rows = Array.from(document.querySelectorAll('#tables tbody tr')).map(r => parseInt(r.cells[0].textContent)); "
                    + "return {status: document.getElementById('status').textContent, rate: rate, "
                    + "right: Math.max(...sink), width: window.innerWidth, rows: rows};") as? [String: Any])
        let status = try XCTUnwrap(shown["status"] as? String)
        XCTAssertTrue(status.hasPrefix("ready — up "), "not connecting…: \(status)")
        let rate = try XCTUnwrap(shown["rate"] as? String)
        XCTAssertNotNil(rate.range(of: #"^[0-9.]+/s$"#, options: .regularExpression), rate)
        XCTAssertGreaterThan(Double(rate.dropLast(2)) ?? 0, 0, "the rate since the start: \(rate)")
        let right = try XCTUnwrap(shown["right"] as? Double)
        let width = try XCTUnwrap((shown["width"] as? Int).map(Double.init) ?? (shown["width"] as? Double))
        XCTAssertLessThanOrEqual(right, width, "every node, the sinks too, is in the window")
        let rows = try XCTUnwrap(shown["rows"] as? [Int])
        XCTAssertGreaterThan(rows.count, 2)
        XCTAssertEqual(rows, rows.sorted(by: >), "the newest row first")
        // An edge's rate and its label do not overlap.
        let apart = try browser.run(
            "const edge = document.querySelector('g.edge[data-from=\"streams.numbers.ops.0\"]'); "
                + "const label = edge.querySelector('.stream').getBoundingClientRect(); "
                + "const rate = edge.querySelector('.rate').getBoundingClientRect(); "
                + "return rate.top >= label.bottom || rate.bottom <= label.top;")
        XCTAssertEqual(apart as? Bool, true)
    }

    func testALongChainStaysLegibleAt1280By900AndTheLateEdgeShowsTheLateRate() throws {
        guard WebDriver.isInstalled else { throw XCTSkip("chromium and chromedriver are not installed") }
        // Fourteen components in a row; element 5 is stamped far behind the others: one late element.
        let pipeline = """
            name: long
            streams:
              numbers:
                source: { interval: 20ms }
                eventTime: { time: ". == 5 ? 0 : . * 1000 + 100000", maxDelay: 0s, late: side }
                ops:
                  - map: . + 1
                  - filter: . > 0
                  - map: . * 2
                  - map: . - 1
                  - filter: . % 3 != 7
                  - map: . + 0
                  - map: "{n: .}"
                  - map: "{n: .n, half: .n / 2}"
                  - filter: .n >= 0
                  - map: "{n: .n}"
            sinks:
              - { stream: numbers, file: { path: "\(directory.appendingPathComponent("long.jsonl").path)" } }
              - { stream: numbers.late, file: { path: "\(directory.appendingPathComponent("late.jsonl").path)" } }
            """
        let (run, port) = try startViewed(pipeline, name: "long")
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        Thread.sleep(forTimeInterval: 2.5)
        let browser = try WebDriver(width: 1280, height: 900)
        try browser.open("http://127.0.0.1:\(port)/")
        Thread.sleep(forTimeInterval: 1.5)
        let shown = try XCTUnwrap(
            try browser.run(
                "const labels = Array.from(document.querySelectorAll('#graph g.node text.label')).map(t => t.getBoundingClientRect().height); "
                    + "const late = document.querySelector('g.edge.side .rate').textContent; "
                    + "const main = document.querySelector('g.edge:not(.side)[data-to=\"sinks.0\"] .rate').textContent; "
                    + "return {nodes: labels.length, smallest: Math.min(...labels), late: late, main: main};")
                as? [String: Any])
        XCTAssertGreaterThanOrEqual(shown["nodes"] as? Int ?? 0, 13, "\(shown)")
        // 13 px text at 75% or more: drawn at least 9.5 px high (it was under 5 px, fitted to the window).
        XCTAssertGreaterThanOrEqual(shown["smallest"] as? Double ?? 0, 9.5, "\(shown)")
        let late = try XCTUnwrap(shown["late"] as? String)
        let main = try XCTUnwrap(shown["main"] as? String)
        XCTAssertEqual(late, "0.0/s", "one late element, seconds ago: \(shown)")
        XCTAssertGreaterThan(Double(main.dropLast(2)) ?? 0, 10, "\(shown)")
    }

    func testWhatThePageShowsIsEscaped() throws {
        guard WebDriver.isInstalled else { throw XCTSkip("chromium and chromedriver are not installed") }
        let hostile = "<script>window.pwned = 1</script><img src=x onerror=window.pwned=2>"
        let (run, port) = try startViewed(
            """
            source: { interval: 50ms }
            ops:
              - map: { text: '"\(hostile)"', n: . }
            sink: { table: { columns: [text, n] } }
            """, name: "hostile")
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let browser = try WebDriver()
        try browser.open("http://127.0.0.1:\(port)/")
        try browser.waitUntil("the graph drawn") { "return document.querySelectorAll('#graph g.node').length === 3;" }
        _ = try browser.run(
            "document.querySelector('g.node[data-place=\"ops.0\"]').dispatchEvent(new MouseEvent('click', {bubbles: true}));"
        )
        try browser.waitUntil("elements arrive") { "return document.querySelectorAll('#samples li').length >= 2;" }
        try browser.waitUntil("the table") { "return document.querySelectorAll('#tables tbody tr').length >= 2;" }
        XCTAssertEqual(try browser.run("return String(window.pwned);") as? String, "undefined")
        XCTAssertEqual(
            try browser.run("return Array.from(document.scripts).map(s => s.src ? 'src' : s.type);") as? [String],
            ["application/json", "src"], "only the page's own: its first snapshot (data) and /ui.js")
        XCTAssertEqual(
            try browser.run("return document.querySelectorAll('#tables img, #samples img').length;") as? Int, 0)
        let cell = try browser.run("return document.querySelector('#tables tbody td').textContent;") as? String
        XCTAssertEqual(cell, hostile)
        XCTAssertTrue(
            (try browser.run("return document.querySelector('#node-parameters').textContent;") as? String)?.contains(
                "<script>") == true)
    }

    func testANodeThatStopsMovingIsMarkedStalled() throws {
        guard WebDriver.isInstalled else { throw XCTSkip("chromium and chromedriver are not installed") }
        // One element at once, the next in an hour: the run goes on, nothing moves after the first.
        let (run, port) = try startViewed(
            """
            source: { events: [{ at: 0ms, next: 1 }, { at: 1h, next: 2 }] }
            ops:
              - map: . * 2
            sink: { file: { path: out.jsonl } }
            """, name: "quiet")
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let browser = try WebDriver()
        try browser.open("http://127.0.0.1:\(port)/")
        try browser.waitUntil("the graph drawn") { "return document.querySelectorAll('#graph g.node').length === 3;" }
        XCTAssertEqual(try browser.run("return document.querySelectorAll('g.node.stalled').length;") as? Int, 0)
        try browser.waitUntil("marked stalled after five quiet seconds", timeout: 10) {
            "return document.querySelectorAll('g.node.stalled').length === 3;"
        }
        XCTAssertEqual(try browser.run("return document.querySelectorAll('g.node.error').length;") as? Int, 0)
    }

    func testTheServerAnswersOnlyItsOwnRoutesOnItsOwnAddress() throws {
        let (run, port) = try startViewed(try squares, name: "squares")
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let page = try XCTUnwrap(LoopbackHTTP.get(port, "/"))
        XCTAssertEqual(page.status, 200)
        assertContains(page.body, "<script src=\"/ui.js\"></script>")
        XCTAssertFalse(page.body.contains("http://") || page.body.contains("https://"), "nothing from elsewhere")
        let script = try XCTUnwrap(LoopbackHTTP.get(port, "/ui.js"))
        XCTAssertFalse(script.body.contains("http://") || script.body.contains("https://"), "nothing from elsewhere")
        XCTAssertTrue(try XCTUnwrap(LoopbackHTTP.get(port, "/graph.svg")).body.hasPrefix("<svg "))
        for path in ["/metrics", "/etc/passwd", "/../../etc/passwd", "/graph.svg/..", "/node?place=nowhere"] {
            XCTAssertEqual(LoopbackHTTP.get(port, path)?.status, 404, path)
        }
        let node = try XCTUnwrap(LoopbackHTTP.get(port, "/node?place=streams.numbers.ops.0"))
        XCTAssertEqual(node.status, 200)
        assertContains(node.body, "\"parameters\":\". % 2 == 0\"")

        let taken = try runRivulet([
            "run", directory.appendingPathComponent("squares.yaml").path, "--ui", "127.0.0.1:\(port)",
        ])
        XCTAssertEqual(taken.status, 2)
        assertContains(taken.stderr, "error: --ui: cannot listen on 127.0.0.1:\(port): the address is already in use")
        XCTAssertEqual(
            LoopbackHTTP.listeningAddresses(of: run.pid), [String(format: "0100007F:%04X", port)],
            "it listens on the address given and nowhere else")
        let bad = try runRivulet(["run", directory.appendingPathComponent("squares.yaml").path, "--ui", "8080"])
        XCTAssertEqual(bad.status, 2)
        assertContains(bad.stderr, "--ui expects HOST:PORT")
    }

    func testANodesParametersAreShownWithSecretsMasked() throws {
        let (run, port) = try startViewed(
            """
            source: { interval: 50ms }
            ops:
              - map: { n: ., signed: "'${DEMO_TOKEN}' + string(.)" }
            sink: { file: { path: out.jsonl } }
            """, name: "secret", environment: ["DEMO_TOKEN": "tok-5up3r-s3cret-42"])
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        let node = try XCTUnwrap(LoopbackHTTP.get(port, "/node?place=ops.0"))
        XCTAssertEqual(node.status, 200)
        XCTAssertFalse(node.body.contains("tok-5up3r-s3cret-42"), node.body)
        assertContains(node.body, "signed")
        let drawing = try XCTUnwrap(LoopbackHTTP.get(port, "/graph.svg")).body
        XCTAssertFalse(drawing.contains("tok-5up3r-s3cret-42"), drawing)
        // The elements passing it hold the secret too: masked in what the page is sent.
        let tapped = try XCTUnwrap(LoopbackHTTP.get(port, "/tap?place=ops.0&limit=3")).body
        XCTAssertFalse(tapped.contains("tok-5up3r-s3cret-42"), tapped)
        assertContains(tapped, "\"signed\":\"REDACTED")
        // A limit below one meant no limit at all; it is refused.
        for limit in ["-1", "0", "x"] {
            let refused = try XCTUnwrap(LoopbackHTTP.get(port, "/tap?place=ops.0&limit=\(limit)"))
            XCTAssertEqual(refused.status, 400, refused.body)
            assertContains(refused.body, "limit must be a whole number of at least 1")
        }
    }

    func testUnderWatchANewVersionReplacesTheDrawing() throws {
        let file = directory.appendingPathComponent("growing.yaml")
        try "source: { interval: 50ms }\nops:\n  - map: . * 2\nsink: { file: { path: out.jsonl } }\n".write(
            to: file, atomically: true, encoding: .utf8)
        let port = freeLoopbackPort()
        let run = try startRivulet(
            ["run", file.path, "--watch", "--ui", "127.0.0.1:\(port)"], output: .null, error: .pipe)
        defer { if run.exited() == nil { run.send(SIGKILL) } }
        var drawing = ""
        var deadline = Date(timeIntervalSinceNow: 10)
        repeat {
            Thread.sleep(forTimeInterval: 0.05)
            drawing = LoopbackHTTP.get(port, "/graph.svg")?.body ?? ""
        } while drawing.isEmpty && Date() < deadline
        assertContains(drawing, "data-place=\"ops.0\"")
        XCTAssertFalse(drawing.contains("data-place=\"ops.1\""), drawing)
        try
            "source: { interval: 50ms }\nops:\n  - map: . * 2\n  - filter: . > 10\nsink: { file: { path: out.jsonl } }\n"
            .write(to: file, atomically: true, encoding: .utf8)
        deadline = Date(timeIntervalSinceNow: 10)
        repeat {
            Thread.sleep(forTimeInterval: 0.05)
            drawing = LoopbackHTTP.get(port, "/graph.svg")?.body ?? ""
        } while !drawing.contains("data-place=\"ops.1\"") && Date() < deadline
        assertContains(drawing, "filter . &gt; 10")
        XCTAssertTrue(
            LoopbackHTTP.get(port, "/node?place=ops.1")?.body.contains("\"component\":\"filter\"") == true)
    }
}
