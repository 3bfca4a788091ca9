import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Host) import PipelineHost
import Postgres
@_spi(Components) import Reactive
import SQLite

@_spi(Host) @testable import Components

/// Fuzz targets for what arrives from outside at run time: raw bytes on an `httpServer`
/// connection, values read back from SQLite, and extreme numbers through the stateful operators.
enum ServerFuzzTargets {
    /// The bytes as a client's on a connection of `httpServer`: the HTTP decoder, the connection
    /// guard and the webhook handler (path, method, token, lengths, the body's JSON), fed in two
    /// parts split where the first byte says. Whatever comes back must be HTTP.
    static func webhook(_ bytes: [UInt8]) {
        let settings = WebhookSettings(
            host: "127.0.0.1", port: 0, paths: ["/", "/orders"],
            token: bytes.first.map { $0 & 1 == 1 } == true ? "t" : nil,
            maxBodyBytes: 4096, queueLimit: 8,
            limits: HTTPConnectionLimits(requestTimeout: .seconds(1), maxConnections: 4))
        let channel = EmbeddedChannel()
        do {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandlers(
                HTTPConnectionGuard(HTTPConnections(limits: settings.limits)),
                WebhookHandler(
                    settings: settings, queue: WebhookQueue(limit: settings.queueLimit),
                    server: WebhookServer.ServerReference(),
                    deliver: { elements, answer in answer(.accepted(elements.count)) }))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        } catch {
            fatalError("the webhook pipeline could not be built: \(error)")
        }
        let split = min(bytes.count, Int(bytes.first ?? 0))
        for part in [bytes[..<split], bytes[split...]] where channel.isActive {
            _ = try? channel.writeInbound(channel.allocator.buffer(bytes: part))
        }
        (channel.embeddedEventLoop).advanceTime(by: .seconds(2))
        var answered: [UInt8] = []
        while let buffer = try? channel.readOutbound(as: ByteBuffer.self) { answered += buffer.readableBytesView }
        guard answered.isEmpty || answered.starts(with: Array("HTTP/1.1 ".utf8)) else {
            fatalError("an answer that is not HTTP: \(String(decoding: answered.prefix(80), as: UTF8.self))")
        }
        _ = try? channel.finish()
    }

    /// The bytes as messages of a server's replication stream, each after a byte giving its length:
    /// each read as a copy-data message (a keepalive, a piece of log) and as pgoutput's payload,
    /// the decoder keeping the relations earlier messages described, and each change decoded made
    /// into its elements. A server's bytes, however wrong, must be an error, never a trap.
    static func pgoutput(_ bytes: [UInt8]) {
        var decoder = PgOutputDecoder()
        var rest = bytes[...]
        while let length = rest.first {
            rest = rest.dropFirst()
            let message = rest.prefix(Int(length))
            rest = rest.dropFirst(message.count)
            _ = try? ReplicationMessage(Array(message))
            guard let decoded = try? decoder.decode(message) else { continue }
            for numerics in PostgresValues.Numerics.allCases {
                _ = PostgresChange.elements(decoded, position: .zero, commitTime: Int64(length), numerics: numerics)
            }
        }
    }

    /// The bytes as one value of the type the first byte picks, bound and read back: it must come
    /// back as the element it stands for (text whole, a NUL included; a BLOB as base64).
    static func sqliteRow(_ bytes: [UInt8]) {
        guard let database = try? SQLiteDatabase(path: ":memory:", create: true) else {
            fatalError("no in-memory database")
        }
        let payload = Array(bytes.dropFirst())
        let parameter: SQLiteDatabase.Parameter
        let expected: Value
        switch (bytes.first ?? 0) % 5 {
        case 0:
            let text = String(decoding: payload, as: UTF8.self)
            (parameter, expected) = (.text(text), .string(text))
        case 1: (parameter, expected) = (.blob(payload), .string(Data(payload).base64EncodedString()))
        case 2:
            let number = payload.prefix(8).reduce(0) { $0 << 8 | Int($1) }
            (parameter, expected) = (.integer(number), .int(number))
        case 3:
            let bits = payload.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let number = Double(bitPattern: bits)
            (parameter, expected) = (.real(number), number.isNaN ? .null : .double(number))
        default: (parameter, expected) = (.null, .null)
        }
        guard let row = try? database.rows("SELECT ?1 AS v", [parameter]).first, let value = row.values.first else {
            fatalError("no row for \(parameter)")
        }
        let element = value.element
        guard element.isEqualInExpressions(to: expected) else {
            fatalError("\(parameter) came back as \(element), not \(expected)")
        }
    }

    /// Stored state is input: a group's partition entry (a JetStream bucket's value) and a
    /// checkpoint's state of a component (an SQLite row), both as the bytes give them, must be
    /// refused or restored, never trapped on. The first byte picks the pipeline whose every
    /// component is given the rest, parsed as JSON (or as text), as its restored state.
    static func storedState(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
        if let entry = try? GroupPartitionStates.checked(text, partition: 0, group: "fuzz") {
            // What a reader does with an entry it took: its restart and its coverage.
            let position = entry["position"].flatMap { $0 == .null ? nil : $0 }
            if let floor = position?["floor"]?.intValue { _ = UInt64(floor + 1) }
            _ = NATSCoverage(restoring: position)
        }
        let value = (try? JSONParser.parse(Array(bytes.dropFirst()))) ?? .string(text)
        // A `nats` source's position in a runner's own checkpoint (its SQLite file).
        if let positions = try? NATSPositions(restoring: value) {
            for name in value["consumers"]?.objectValue?.keys.map({ $0 }) ?? [] {
                _ = positions.coverage(of: name).contains(1)
            }
        }
        let pipelines = [
            "aggregate: { by: .k, every: 10ms, allowedLateness: 20ms, fields: { n: count, s: { sum: .v }, f: { first: .v } } }",
            "window: { every: 10ms, slide: 5ms, allowedLateness: 20ms }",
            "window: { sessionGap: 5ms, ops: [{ reduce: { seed: 0, accumulator: acc + 1 } }] }",
            "buffer: { timeSpan: 10ms, count: 3 }",
            "sample: 5ms",
            "dedupe: { key: .k, ttl: 10ms }",
            "debounce: 3ms",
            "throttle: 5ms",
            "groupBy: { key: .k, ops: [{ scan: { seed: 0, accumulator: acc + 1 } }] }",
            "partitionBy: { key: .k, partitions: 2, ops: [{ aggregate: { by: .k, every: 10ms, fields: { n: count } } }] }",
        ]
        let chosen = pipelines[Int(first) % pipelines.count]
        let eventTime = first % 2 == 0 ? "eventTime: { time: .t, maxDelay: 5ms }\n" : ""
        let source =
            "source: { events: [{ at: 1ms, next: { t: 1, k: a, v: 2 } }, { at: 12ms, next: { t: 12, k: b, v: 3 } }, { at: 30ms, complete: true }] }"
        let loaded = PipelineLoader(registry: FuzzTargets.registry, environment: [:]).load(
            text: "name: fuzz\n\(source)\n\(eventTime)ops:\n  - \(chosen)\nsink: { file: /dev/null }\n",
            path: "fuzz.yaml")
        guard let pipeline = loaded.pipeline else { return }
        var restored: [String: Value] = [:]
        for key in CheckpointPlan.shape(of: pipeline) { restored[key] = value }
        let scheduler = VirtualTimeScheduler(resolution: .microseconds(1))
        var setup = PipelineHost.Setup()
        setup.baseDirectory = "/tmp"
        setup.checkpoints = { clock in
            Checkpoints(restored: restored, interval: .milliseconds(5), scheduler: clock, commit: { _ in })
        }
        guard let host = try? PipelineHost(pipeline, on: scheduler, setup) else { return }
        host.start()
        host.runToEnd(on: scheduler, maxSteps: 1_000_000)
    }

    /// Numbers the stateful operators must survive: the largest and smallest integers, infinities
    /// in text, NaN-like values, fractions and zero.
    private static let extremes = [
        "9223372036854775807", "-9223372036854775807", "-9223372036854775808", "0", "1", "-1", "1e308", "-1e308",
        "4.9e-324", "0.5", "\"x\"", "null", "[]", "{}", "true", "1e19", "-1e19", "9007199254740993",
    ]

    /// A pipeline of one stateful operator (picked by the first byte) over events whose times, keys
    /// and values are extreme numbers picked by the next bytes, with the rest as an expression,
    /// run on the virtual clock: it may fail, never crash or run for ever.
    static func operators(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        let count = min(Int(bytes[1] % 8) + 1, (bytes.count - 2) / 3)
        var events: [String] = []
        for index in 0..<count {
            let pick = bytes[2 + index * 3..<2 + index * 3 + 3].map { extremes[Int($0) % extremes.count] }
            events.append("{ at: \(index * 7)ms, next: { t: \(pick[0]), k: \(pick[1]), v: \(pick[2]) } }")
        }
        let rest = String(decoding: bytes.dropFirst(2 + count * 3), as: UTF8.self)
        let expression = rest.isEmpty ? ".v" : rest.replacing("\"", with: "'").replacing("\n", with: " ")
        let operators = [
            "aggregate: { by: .k, every: 10ms, time: .t, fields: { n: count, s: { sum: \"\(expression)\" }, m: { max: .v } } }",
            "aggregate: { every: 1ms, fields: { a: { min: \"\(expression)\" } } }",
            "window: { every: 10ms, slide: 5ms, ops: [{ reduce: { seed: 0, accumulator: \"acc + (\(expression))\" } }] }",
            "groupBy: { key: \"\(expression)\", ops: [{ window: 5ms }, { map: len(.) }] }",
            "dedupe: { key: \"\(expression)\", ttl: 10ms }",
            "reduce: { seed: 0, accumulator: \"acc + (\(expression))\" }",
            "scan: { seed: .v, accumulator: \"acc * 2 + (\(expression))\" }",
        ]
        let chosen = operators[Int(bytes[0]) % operators.count]
        let text = """
            source: { events: [\(events.joined(separator: ", ")), { at: 100ms, complete: true }] }
            ops:
              - \(chosen)\(chosen.hasPrefix("window") ? "" : "\n    onError: skip")
            sink: { file: /dev/null }
            """
        let loaded = PipelineLoader(registry: FuzzTargets.registry, environment: [:]).load(
            text: text, path: "fuzz.yaml")
        guard let pipeline = loaded.pipeline else {
            if ProcessInfo.processInfo.environment["RIVULET_FUZZ_SHOW"] != nil {
                print(text, loaded.diagnostics.map(\.message))
            }
            return
        }
        let scheduler = VirtualTimeScheduler(resolution: .microseconds(1))
        var setup = PipelineHost.Setup()
        setup.baseDirectory = "/tmp"
        guard let host = try? PipelineHost(pipeline, on: scheduler, setup) else { return }
        host.start()
        let limit = 1_000_000
        if host.runToEnd(on: scheduler, maxSteps: limit) == limit {
            fatalError("no end after a million steps: \(text)")
        }
    }
}
