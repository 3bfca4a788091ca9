import CNATS
import RivuletTestSupport
import XCTest

@testable import Components

/// JetStream's answers reach the sink by the key of the publish, in bursts, each once.
final class NATSPublishAnswersTests: LeakCheckingTestCase {
    func testAnswersAreMatchedByMessageAndHandedOverOnceABurst() throws {
        let answers = NATSPublishAnswers()
        nonisolated(unsafe) var count = 0
        answers.schedule = { _ in count += 1 }
        var first: OpaquePointer?
        var second: OpaquePointer?
        var stray: OpaquePointer?
        XCTAssertEqual(natsMsg_Create(&first, "a", nil, nil, 0), NATS_OK)
        XCTAssertEqual(natsMsg_Create(&second, "b", nil, nil, 0), NATS_OK)
        XCTAssertEqual(natsMsg_Create(&stray, "c", nil, nil, 0), NATS_OK)
        defer { for message in [first, second, stray] { natsMsg_Destroy(message) } }
        answers.expect(try XCTUnwrap(first), key: 1)
        answers.expect(try XCTUnwrap(second), key: 2)
        answers.expect(try XCTUnwrap(stray), key: 3)
        answers.forget(try XCTUnwrap(stray))

        answers.answered(first, failure: nil)
        answers.answered(second, failure: (NATS_TIMEOUT, jsErrCode(0)))
        answers.answered(stray, failure: nil)  // forgotten: sent again under another message
        answers.answered(first, failure: nil)  // a second answer to one publish is dropped
        XCTAssertEqual(count, 1, "one hand-over for the burst")
        let taken = answers.take()
        XCTAssertEqual(taken.map(\.key), [1, 2])
        XCTAssertNil(taken[0].problem)
        XCTAssertEqual(taken[1].problem?.status, NATS_TIMEOUT)
        XCTAssertTrue(taken[1].problem?.text.contains("not stored") ?? false, taken[1].problem?.text ?? "")
        XCTAssertTrue(answers.take().isEmpty)
    }
}
