import Postgres
import XCTest

final class ReplicationMessageTests: XCTestCase {
    private func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    func testLogDataCarriesItsPositionsAndThePluginsBytes() throws {
        let bytes = [UInt8(ascii: "w")] + bigEndian(0x10) + bigEndian(0x20) + bigEndian(7) + [1, 2, 3]
        let message = try ReplicationMessage(bytes)
        XCTAssertEqual(
            message,
            .logData(
                start: LogSequenceNumber(0x10), end: LogSequenceNumber(0x20), clock: 7, payload: [1, 2, 3][...]))
    }

    func testAKeepAliveSaysWhetherItWantsAnAnswer() throws {
        let bytes = [UInt8(ascii: "k")] + bigEndian(0x30) + bigEndian(9) + [1]
        XCTAssertEqual(
            try ReplicationMessage(bytes), .keepAlive(end: LogSequenceNumber(0x30), clock: 9, replyRequested: true))
    }

    func testATruncatedOrUnknownMessageIsAnError() {
        XCTAssertThrowsError(try ReplicationMessage([UInt8(ascii: "w"), 0, 0])) { error in
            XCTAssertEqual((error as? PostgresError)?.message, "a replication message ended before its last field")
        }
        XCTAssertThrowsError(try ReplicationMessage([UInt8(ascii: "x")]))
        XCTAssertThrowsError(try ReplicationMessage([]))
    }

    func testTheStatusUpdateIsTheProtocolsThirtyFourBytes() {
        let bytes = ReplicationMessage.standbyStatus(
            written: LogSequenceNumber(1), flushed: LogSequenceNumber(2), applied: LogSequenceNumber(3), clock: 4,
            replyRequested: true)
        XCTAssertEqual(bytes, [UInt8(ascii: "r")] + bigEndian(1) + bigEndian(2) + bigEndian(3) + bigEndian(4) + [1])
    }
}
