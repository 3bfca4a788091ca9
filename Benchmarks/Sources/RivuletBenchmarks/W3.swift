@_spi(Host) import Pipeline

#if canImport(Glibc)
    import Glibc
#endif

/// W3's hand-written side: the W3 pipeline's work (count and sum of `.v` per `.key` per minute of
/// `.ts`, one object per key per window in first-seen order, as JSON Lines) as a dictionary loop
/// with the same JSON code.
enum W3 {
    /// Writes `count` records of 10,000 keys over 10 minutes of event time, in time order.
    static func generate(count: Int, path: String) {
        guard let file = fopen(path, "w") else {
            print("cannot write \(path)")
            exit(1)
        }
        defer { fclose(file) }
        var line: [UInt8] = []
        let minutes = 10
        for i in 0..<count {
            let ts = i * 60_000 * minutes / count
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: #"{"key": "k\#((i &* 7919) % 10_000)", "v": \#(i % 97), "ts": \#(ts)}"#.utf8)
            line.append(0x0A)
            fwrite(line, 1, line.count, file)
        }
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
        var index: [String: Int] = [:]
        var keys: [String] = []
        var counts: [Int] = []
        var sums: [Double] = []
        var window: Int64?
        var out: [UInt8] = []
        func flush() {
            guard let current = window else { return }
            for row in keys.indices {
                var object = JSONObject()
                object["key"] = .string(keys[row])
                object["start"] = .int(Int(current * 60_000))
                object["count"] = .int(counts[row])
                object["sum"] = Int(exactly: sums[row]).map { .int($0) } ?? .double(sums[row])
                JSONSerializer.write(.object(object), to: &out)
                out.append(0x0A)
            }
            fwrite(out, 1, out.count, outputFile)
            out.removeAll(keepingCapacity: true)
            index.removeAll(keepingCapacity: true)
            keys.removeAll(keepingCapacity: true)
            counts.removeAll(keepingCapacity: true)
            sums.removeAll(keepingCapacity: true)
            window = nil
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
            let minute = Int64((ts / 60_000).rounded(.down))
            if let current = window, minute > current { flush() }
            if window == nil { window = minute }
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
        flush()
        free(lineBuffer)
    }
}
