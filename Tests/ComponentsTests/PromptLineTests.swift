import RivuletTestSupport
import XCTest

@testable import Components

/// The prompt's line, fed the bytes a terminal in cbreak mode sends.
final class PromptLineTests: LeakCheckingTestCase {
    private func feed(_ bytes: [UInt8]) -> [PromptLine.Change] {
        var line = PromptLine()
        return bytes.map { line.feed($0) }
    }

    func testEachCharacterGivesTheWholeTextAndBackspaceTakesOneAway() {
        XCTAssertEqual(
            feed(Array("ab".utf8) + [0x7F, 0x7F, 0x7F]),
            [.typed("a"), .typed("ab"), .typed("a"), .typed(""), .typed("")])
    }

    func testACharacterOfSeveralBytesIsTypedOnceWhole() {
        XCTAssertEqual(feed(Array("é".utf8)), [.unchanged, .typed("é")])
    }

    func testArrowKeysAndLineBreaksAreSkippedAndCtrlDEnds() {
        // ESC [ A is the up arrow.
        XCTAssertEqual(
            feed([0x1B, UInt8(ascii: "["), UInt8(ascii: "A"), UInt8(ascii: "x"), 0x0D, 0x04]),
            [.unchanged, .unchanged, .unchanged, .typed("x"), .unchanged, .ended])
    }

    func testBytesThatNeverMakeACharacterAreDropped() {
        XCTAssertEqual(feed([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, UInt8(ascii: "z")]).last, .typed("z"))
    }
}
