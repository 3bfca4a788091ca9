import CNATS
import Reactive
import RivuletTestSupport
import XCTest

@_spi(Host) @testable import Components

/// The message a `nats` sink's publish becomes: its headers and its Nats-Msg-Id.
final class NATSPublishTests: LeakCheckingTestCase {
    override func setUp() {
        super.setUp()
        // The C client sets itself up on its first connection; no connection is made here.
        XCTAssertEqual(nats_Open(-1), NATS_OK)
    }

    private func header(_ msgId: String?, _ name: String = "Nats-Msg-Id") throws -> String? {
        let publish = NATSPublish(
            element: .null, subject: "out", data: Array("{}".utf8), headers: [("Source", "rivulet")], msgId: msgId,
            origin: nil, tries: 0)
        let (created, status) = publish.message()
        XCTAssertEqual(status, NATS_OK)
        let message = try XCTUnwrap(created)
        defer { natsMsg_Destroy(message) }
        var value: UnsafePointer<CChar>?
        guard natsMsgHeader_Get(message, name, &value) == NATS_OK, let value else { return nil }
        return String(cString: value)
    }

    func testAMsgIdIsSentAsItsHeaderAndAnEmptyOneIsNotSent() throws {
        XCTAssertEqual(try header("totals-p3:17"), "totals-p3:17")
        XCTAssertNil(try header(""), "msgId: \"\" asks for no id")
        XCTAssertNil(try header(nil))
        XCTAssertEqual(try header(nil, "Source"), "rivulet")
    }
}
