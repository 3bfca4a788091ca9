import RivuletTestSupport
import XCTest

@testable import Components

/// The subjects a `nats` sink's created stream stores, from its subject template.
final class NATSStreamsTests: LeakCheckingTestCase {
    func testEachTemplatedTokenIsAWildcard() {
        XCTAssertEqual(NATSStreams.subjects(storing: "invoices.{{ .customer }}"), "invoices.*")
        XCTAssertEqual(NATSStreams.subjects(storing: "orders.new"), "orders.new")
        XCTAssertEqual(NATSStreams.subjects(storing: "{{ .region }}.orders.{{ .a.b }}-x"), "*.orders.*")
        XCTAssertEqual(NATSStreams.subjects(storing: "a.pre-{{ .id }}.z"), "a.*.z")
        XCTAssertEqual(NATSStreams.subjects(storing: "{{ .subject }}"), "*")
    }

    func testASubjectMatchesAFilterAsNATSMatchesIt() {
        XCTAssertTrue(NATSStreams.subject("orders.dead", matches: "orders.>"))
        XCTAssertTrue(NATSStreams.subject("orders.eu.dead", matches: "orders.>"))
        XCTAssertFalse(NATSStreams.subject("orders", matches: "orders.>"), "> needs a token")
        XCTAssertTrue(NATSStreams.subject("orders.dead", matches: "orders.*"))
        XCTAssertFalse(NATSStreams.subject("orders.eu.dead", matches: "orders.*"))
        XCTAssertTrue(NATSStreams.subject("a.b.c", matches: "*.b.>"))
        XCTAssertFalse(NATSStreams.subject("dead.orders", matches: "orders.>"))
        XCTAssertTrue(NATSStreams.subject("orders.new", matches: "orders.new"))
        XCTAssertFalse(NATSStreams.subject("orders.new.x", matches: "orders.new"))
    }
}
