import XCTest

@testable import Components

/// The subjects a `nats` sink's created stream stores, from its subject template.
final class NATSStreamsTests: XCTestCase {
    func testEachTemplatedTokenIsAWildcard() {
        XCTAssertEqual(NATSStreams.subjects(storing: "invoices.{{ .customer }}"), "invoices.*")
        XCTAssertEqual(NATSStreams.subjects(storing: "orders.new"), "orders.new")
        XCTAssertEqual(NATSStreams.subjects(storing: "{{ .region }}.orders.{{ .a.b }}-x"), "*.orders.*")
        XCTAssertEqual(NATSStreams.subjects(storing: "a.pre-{{ .id }}.z"), "a.*.z")
        XCTAssertEqual(NATSStreams.subjects(storing: "{{ .subject }}"), "*")
    }
}
