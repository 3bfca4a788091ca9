import XCTest

/// Checks that `text` (a command's output, a report) holds each of `parts`; a failure names the
/// missing part and shows the whole text.
public func assertContains(
    _ text: String, _ parts: String..., file: StaticString = #filePath, line: UInt = #line
) {
    for part in parts where !text.contains(part) {
        XCTFail("missing \(part.debugDescription) in:\n\(text)", file: file, line: line)
    }
}
