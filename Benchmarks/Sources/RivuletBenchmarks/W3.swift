@_spi(Host) @_spi(Components) import Pipeline

#if canImport(Glibc)
    import Glibc
#endif

/// W3's hand-written side: the W3 pipeline's work on event time (count and sum of `.v` per `.key`
/// per minute of `.ts`, with elements up to 10 s out of order; a window is written once the
/// watermark — the latest time seen minus 10 s — passes its end; one object per key, as JSON
/// Lines) as a dictionary loop with the same JSON code.
enum W3 {
    /// The out-of-order allowance, in milliseconds.
    static let maxDelay: Int64 = 10_000

    /// Writes `count` records of `keys` keys over 10 minutes of event time; 5% of them come up to
    /// 10 s later than their time (so none is behind a 10 s watermark).
    static func generate(count: Int, keys: Int = 10_000, path: String) {
        guard let file = fopen(path, "w") else {
            print("cannot write \(path)")
            exit(1)
        }
        defer { fclose(file) }
        var line: [UInt8] = []
        let minutes = 10
        for i in 0..<count {
            var ts = i * 60_000 * minutes / count
            let hash = (i &* 2_654_435_761) & 0xFFFF_FFFF
            if hash % 100 < 5 { ts = max(0, ts - (hash / 100) % 10_001) }
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: #"{"key": "k\#((i &* 7919) % keys)", "v": \#(i % 97), "ts": \#(ts)}"#.utf8)
            line.append(0x0A)
            fwrite(line, 1, line.count, file)
        }
    }

    /// One open window: its keys in first-seen order, with their count and sum.
    fileprivate struct Window {
        var index: [String: Int] = [:]
        var keys: [String] = []
        var counts: [Int] = []
        var sums: [Double] = []
    }

    static func loop(input: String, output: String) {
        guard let inputFile = fopen(input, "r"), let outputFile = fopen(output, "w") else {
            print("cannot open files")
            exit(1)
        }
        defer {
            fclose(inputFile)
            fclose(outputFile)
        }
        var windows: [Int64: Window] = [:]
        var latest = Int64.min
        var out: [UInt8] = []
        func flush(_ minute: Int64) {
            guard let window = windows.removeValue(forKey: minute) else { return }
            for row in window.keys.indices {
                var object = JSONObject()
                object["key"] = .string(window.keys[row])
                object["start"] = .int(Int(minute * 60_000))
                object["count"] = .int(window.counts[row])
                let sum = window.sums[row]
                object["sum"] = Int(exactly: sum).map { .int($0) } ?? .double(sum)
                JSONSerializer.write(.object(object), to: &out)
                out.append(0x0A)
            }
            fwrite(out, 1, out.count, outputFile)
            out.removeAll(keepingCapacity: true)
        }
        var lineBuffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        while true {
            let length = getline(&lineBuffer, &capacity, inputFile)
            if length <= 0 { break }
            let bytes = UnsafeBufferPointer(
                start: UnsafeRawPointer(lineBuffer!).assumingMemoryBound(to: UInt8.self), count: length - 1)
            guard let value = try? JSONParser.parse(bytes), case .object(let object) = value,
                case .string(let key)? = object["key"], let ts = object["ts"]?.doubleValue,
                let v = object["v"]?.doubleValue
            else { continue }
            let time = Int64(ts)
            // Behind the watermark: late, dropped (none in the generated data).
            if latest != .min && time < latest - maxDelay { continue }
            let minute = Int64((ts / 60_000).rounded(.down))
            windows[minute, default: Window()].add(key, v)
            if time > latest {
                latest = time
                // Every window whose end the watermark passed.
                let watermark = latest - maxDelay
                for open in windows.keys.sorted() where (open + 1) * 60_000 <= watermark { flush(open) }
            }
        }
        for open in windows.keys.sorted() { flush(open) }
        free(lineBuffer)
    }
}

extension W3.Window {
    fileprivate mutating func add(_ key: String, _ v: Double) {
        if let row = index[key] {
            counts[row] += 1
            sums[row] += v
        } else {
            index[key] = keys.count
            keys.append(key)
            counts.append(1)
            sums.append(v)
        }
    }
}
