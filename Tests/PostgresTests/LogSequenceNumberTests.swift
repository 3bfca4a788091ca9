import Postgres
import XCTest

final class LogSequenceNumberTests: XCTestCase {
    func testItReadsAndWritesTheServersForm() {
        let position = LogSequenceNumber("16/B374D848")
        XCTAssertEqual(position?.value, 0x16_B374_D848)
        XCTAssertEqual(position?.description, "16/B374D848")
        XCTAssertEqual(LogSequenceNumber(0).description, "0/0")
        XCTAssertLessThan(LogSequenceNumber("0/FFFFFFFF")!, LogSequenceNumber("1/0")!)
    }

    func testAnythingElseIsNotAPosition() {
        for text in ["", "16", "16/", "/1", "G/1", "1/2/3", "123456789/0", "-1/0"] {
            XCTAssertNil(LogSequenceNumber(text), text)
        }
    }

    func testPostgresClockIsMicrosecondsSince2000() {
        XCTAssertEqual(PostgresClock.unixMilliseconds(0), 946_684_800_000)
        XCTAssertEqual(PostgresClock.postgresMicroseconds(unixMilliseconds: 946_684_800_001), 1000)
    }
}
