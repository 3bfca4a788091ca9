import BinaryTestSupport
import Components
import Foundation
import Pipeline
import RivuletTestSupport
import XCTest

/// The `nats` sink's partitioned subjects against a real nats-server whose subject mapping
/// `partition()` places the same keys: Rivulet's hash and the server's must agree, so producers
/// that are not Rivulet can feed the partitions a runner reads.
final class NATSPartitionTests: NATSTestCase {
    private var server: NATSServer!

    override var natsURL: String { server.url }

    override func setUpWithError() throws {
        try super.setUpWithError()
        let config = directory.appendingPathComponent("mapping.conf")
        // The mapping the docs give producers that are not Rivulet.
        try """
        listen: 127.0.0.1:-1
        jetstream { store_dir: "\(directory.appendingPathComponent("js").path)" }
        mappings { "orders.in.*": "orders.{{partition(16,1)}}" }
        """.write(to: config, atomically: true, encoding: .utf8)
        server = try NATSServer(arguments: ["-c", config.path])
    }

    override func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    /// Customers' keys: plain, long, non-ASCII (the hash is of UTF-8 bytes) and digits.
    private let customers =
        (0..<120).map { "c\($0)" } + [
            "zoë", "東京", "customer-with-a-rather-long-name-\(String(repeating: "x", count: 80))", "42",
        ]

    func testEachElementGoesToTheSubjectOfItsKeysPartitionAsTheServersMappingPlacesIt() throws {
        let events = customers.enumerated().map { index, customer in
            "{ at: \(index)ms, next: { customer: \"\(customer)\", id: \(index) } }"
        }.joined(separator: ", ")
        let end = "{ at: \(customers.count)ms, complete: true }"
        // Rivulet places each element itself...
        let placed = try run(
            """
            source: { events: [\(events), \(end)] }
            sink: { nats: { url: "\(natsURL)", subject: orders, partitionBy: .customer, partitions: 16, stream: ORDERS, create: true } }
            """)
        XCTAssertEqual(placed.status, 0, placed.stderr)
        // ...a producer that is not Rivulet publishes on orders.in.KEY and the server maps it.
        let mapped = try run(
            """
            source: { events: [\(events), \(end)] }
            sink: { nats: { url: "\(natsURL)", subject: "orders.in.{{ .customer }}", stream: ORDERS } }
            """)
        XCTAssertEqual(mapped.status, 0, mapped.stderr)
        let read = try run(
            """
            source: { nats: { url: "\(natsURL)", stream: ORDERS, subject: "orders.>", durable: reader, metadata: meta } }
            ops:
              - take: \(customers.count * 2)
              - map: { customer: .customer, subject: .meta.subject }
            sink: { file: \(path("read.jsonl")) }
            """)
        XCTAssertEqual(read.status, 0, read.stderr)
        var subjects: [String: [String]] = [:]
        for line in lines("read.jsonl") {
            guard case .object(let record)? = try? JSONParser.parse(line),
                case .string(let customer)? = record["customer"], case .string(let subject)? = record["subject"]
            else { continue }
            subjects[customer, default: []].append(subject)
        }
        XCTAssertEqual(subjects.count, customers.count)
        var used = Set<String>()
        for customer in customers {
            let expected = "orders.\(PartitionHash.partition(of: .string(customer), count: 16))"
            XCTAssertEqual(subjects[customer], [expected, expected], "\(customer): Rivulet's, then the server's")
            used.insert(expected)
        }
        XCTAssertEqual(used.count, 16, "124 keys reach every one of 16 partitions")
    }

    func testPartitionsNeedPartitionBy() throws {
        let lint = try run(
            "source: { events: [] }\nsink: { nats: { url: \"\(natsURL)\", subject: orders, partitions: 8 } }\n")
        XCTAssertEqual(lint.status, 2, lint.stderr)
        assertContains(lint.stderr, "partitions needs partitionBy")
    }
}
