@_spi(Host) @_spi(Components) import Pipeline

#if canImport(Glibc)
    import Glibc
#endif

/// W2's hand-written side: the same work as the W2 pipeline (filter `.stars >= 2500`, keep id and
/// name, write JSON Lines) with the same JSON code (each record parsed whole), as a plain loop;
/// and the same for the two variants, one computing a value and one reading nested fields.
enum W2 {
    /// What the records go through.
    enum Variant: String {
        /// `filter: .stars >= 2500`, `map: {id: .id, name: .name}`.
        case project
        /// `filter: .stars >= 2500`, `map: {id: .id, stars2: .stars * 2}`.
        case compute
        /// Records with an owner: `filter: .owner.stars >= 2500`, `map: {id: .id, login: .owner.login}`.
        case nested
    }

    /// Writes `count` lines of `{"id": i, "name": "item-i", "stars": i % 5000}` to `path`.
    static func generate(count: Int, path: String) {
        writeLines(count: count, path: path) { #"{"id": \#($0), "name": "item-\#($0)", "stars": \#($0 % 5000)}"# }
    }

    /// Writes `count` lines of `{"id": i, "name": "item-i", "owner": {"login": "user-i", "stars": i % 5000}}`.
    static func generateNested(count: Int, path: String) {
        writeLines(count: count, path: path) {
            #"{"id": \#($0), "name": "item-\#($0)", "owner": {"login": "user-\#($0)", "stars": \#($0 % 5000)}}"#
        }
    }

    private static func writeLines(count: Int, path: String, line: (Int) -> String) {
        guard let file = fopen(path, "w") else {
            print("cannot write \(path)")
            exit(1)
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        for i in 0..<count {
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: line(i).utf8)
            bytes.append(0x0A)
            fwrite(bytes, 1, bytes.count, file)
        }
    }

    /// Reads `input` a line at a time, keeps the records with stars >= 2500 as {id, name}, writes
    /// them to `output`.
    static func loop(input: String, output: String, variant: Variant = .project) {
        let inputDescriptor = open(input, O_RDONLY)
        let outputDescriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard inputDescriptor >= 0, outputDescriptor >= 0 else {
            print("cannot open files")
            exit(1)
        }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var start = 0
        var end = 0
        var out: [UInt8] = []
        out.reserveCapacity(1 << 17)
        func process(_ line: UnsafeBufferPointer<UInt8>) {
            guard !line.isEmpty, let value = try? JSONParser.parse(line), case .object(let object) = value else {
                return
            }
            var kept = JSONObject()
            switch variant {
            case .project:
                guard let stars = object["stars"]?.intValue, stars >= 2500 else { return }
                kept["id"] = object["id"] ?? .null
                kept["name"] = object["name"] ?? .null
            case .compute:
                guard let stars = object["stars"]?.intValue, stars >= 2500 else { return }
                kept["id"] = object["id"] ?? .null
                kept["stars2"] = .int(stars * 2)
            case .nested:
                guard case .object(let owner)? = object["owner"], let stars = owner["stars"]?.intValue, stars >= 2500
                else { return }
                kept["id"] = object["id"] ?? .null
                kept["login"] = owner["login"] ?? .null
            }
            JSONSerializer.write(.object(kept), to: &out)
            out.append(0x0A)
            if out.count >= 1 << 16 {
                _ = out.withUnsafeBytes { write(outputDescriptor, $0.baseAddress, $0.count) }
                out.removeAll(keepingCapacity: true)
            }
        }
        while true {
            if start > 0 {
                buffer.withUnsafeMutableBufferPointer { pointer in
                    if end > start { memmove(pointer.baseAddress!, pointer.baseAddress! + start, end - start) }
                }
                end -= start
                start = 0
            }
            let count = buffer.withUnsafeMutableBufferPointer {
                read(inputDescriptor, $0.baseAddress! + end, $0.count - end)
            }
            if count <= 0 { break }
            end += count
            buffer.withUnsafeBufferPointer { pointer in
                var lineStart = start
                for index in start..<end where pointer[index] == 0x0A {
                    process(UnsafeBufferPointer(rebasing: pointer[lineStart..<index]))
                    lineStart = index + 1
                }
                start = lineStart
            }
        }
        if end > start { buffer.withUnsafeBufferPointer { process(UnsafeBufferPointer(rebasing: $0[start..<end])) } }
        _ = out.withUnsafeBytes { write(outputDescriptor, $0.baseAddress, $0.count) }
        close(outputDescriptor)
        close(inputDescriptor)
    }
}
