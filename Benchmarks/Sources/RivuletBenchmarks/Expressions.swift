@_spi(Host) @_spi(Components) import Pipeline

/// EXPR: the cost of evaluating a compiled `filter` expression on a small object, beside the same
/// test written by hand in Swift over the same values.
enum ExpressionBenchmark {
    static func records(_ count: Int) -> [Value] {
        (0..<count).map { i in ["id": .int(i), "name": .string("item-\(i)"), "stars": .int(i % 5000)] }
    }

    static func run() {
        let count = 1_000_000
        let values = records(count)
        let expression = try! Expression(".stars >= 2500 && len(.name) > 6")
        let scope = EvaluationScope(environment: ExpressionEnvironment(seed: 1))
        func compiled() -> Int {
            var passed = 0
            for value in values where (try? expression.evaluate(value, in: scope))?.isTruthy == true { passed += 1 }
            return passed
        }
        func handWritten() -> Int {
            var passed = 0
            for value in opaque(values) {
                guard case .object(let object) = value, case .int(let stars)? = object["stars"],
                    case .string(let name)? = object["name"]
                else { continue }
                if stars >= 2500 && name.count > 6 { passed += 1 }
            }
            return passed
        }
        let expected = handWritten()
        guard compiled() == expected else {
            print("expr MISMATCH")
            return
        }
        var compiledBest = Double.infinity
        var handBest = Double.infinity
        for _ in 0..<5 {
            compiledBest = min(compiledBest, Clock.seconds { _ = compiled() })
            handBest = min(handBest, Clock.seconds { _ = handWritten() })
        }
        let nanoseconds = compiledBest / Double(count) * 1e9
        print("expr filter='.stars >= 2500 && len(.name) > 6' evaluations=\(count) passed=\(expected)")
        print(
            "expr ns_per_eval=\(format(nanoseconds)) hand_ns=\(format(handBest / Double(count) * 1e9)) vs_hand=\(format(compiledBest / handBest))"
        )
    }
}

/// JSON: parsing and serialising a million small records as JSON Lines with Rivulet's codec.
enum JSONBenchmark {
    static func run() {
        let count = 1_000_000
        var document: [UInt8] = []
        for i in 0..<count {
            document.append(
                contentsOf: Array(
                    #"{"id": \#(i), "name": "item-\#(i)", "stars": \#(i % 5000), "tags": ["a", "b\n"], "score": \#(Double(i) / 7)}"#
                        .utf8))
            document.append(0x0A)
        }
        let megabytes = Double(document.count) / 1_048_576
        var parsed: [Value] = []
        parsed.reserveCapacity(count)
        func parse() -> [Value] {
            var values: [Value] = []
            values.reserveCapacity(count)
            document.withUnsafeBufferPointer { buffer in
                var start = 0
                for index in 0..<buffer.count where buffer[index] == 0x0A {
                    values.append(try! JSONParser.parse(UnsafeBufferPointer(rebasing: buffer[start..<index])))
                    start = index + 1
                }
            }
            return values
        }
        func serialize(_ values: [Value]) -> Int {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(document.count)
            for value in values {
                JSONSerializer.write(value, to: &bytes)
                bytes.append(0x0A)
            }
            return bytes.count
        }
        var parseBest = Double.infinity
        var serializeBest = Double.infinity
        var written = 0
        for _ in 0..<3 {
            parseBest = min(parseBest, Clock.seconds { parsed = parse() })
            serializeBest = min(serializeBest, Clock.seconds { written = serialize(parsed) })
        }
        guard parsed.count == count, written > 0, parsed[12345]["name"] == "item-12345" else {
            print("json MISMATCH")
            return
        }
        let writtenMegabytes = Double(written) / 1_048_576
        print("json records=\(count) input_mb=\(format(megabytes)) output_mb=\(format(writtenMegabytes))")
        print(
            "json parse_mb_per_s=\(format(megabytes / parseBest)) serialize_mb_per_s=\(format(writtenMegabytes / serializeBest)) parse_records_per_s=\(Int(Double(count) / parseBest))"
        )
    }
}
