import Foundation
import RivuletTestSupport
import XCTest

@testable import Components
@testable import Pipeline

/// The line reader over a buffer far smaller than its lines, so that every path is taken: a line
/// cut by the buffer's end, a line longer than the whole buffer (which doubles it), a carriage
/// return before a newline, a last line without one, and resuming from an offset.
final class LineReaderTests: LineFileTestCase {

    private let lines = [
        "short", "", "a line longer than the sixteen bytes of the buffer, twice over at least",
        String(repeating: "x", count: 200), "crlf\r", "last without a newline",
    ]

    private func write() throws {
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    private func readAll(_ reader: LineReader) throws -> [String] {
        var read: [String] = []
        while let line = try reader.nextLine({ String(decoding: $0, as: UTF8.self) }) { read.append(line) }
        return read
    }

    func testEveryLineIsReadWholeWhateverTheBufferCutsAndGrows() throws {
        try write()
        let reader = try XCTUnwrap(LineReader(path: path, bufferSize: 16))
        XCTAssertEqual(try readAll(reader), lines.map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 })
        XCTAssertEqual(reader.lineNumber, lines.count)
        XCTAssertEqual(reader.offset, lines.joined(separator: "\n").utf8.count)
    }

    /// A value given back lends its object to the next line, unless the pipeline still holds it.
    func testAValueGivenBackLendsItsObjectToTheNextLineUnlessItIsHeld() throws {
        let text = [#"{"n": 1}"#, #"{"n": 2, "text": "longer than the first"}"#, #"{"n": 3}"#, #"{"n": 4}"#]
        try (text.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let reader = try XCTUnwrap(LineReader(path: path, bufferSize: 16))
        func identity(_ value: Value) throws -> ObjectIdentifier {
            ObjectIdentifier(try XCTUnwrap(value.objectValue?.raw))
        }
        let first = try XCTUnwrap(reader.nextJSONValue())
        let firstObject = try identity(first)
        reader.giveBack(consume first)
        let second = try XCTUnwrap(reader.nextJSONValue())
        XCTAssertEqual(try identity(second), firstObject, "the first was dropped: its object is reused")
        let held = second
        reader.giveBack(consume second)
        let third = try XCTUnwrap(reader.nextJSONValue())
        XCTAssertNotEqual(try identity(third), firstObject, "the second is held: its object is not refilled")
        XCTAssertEqual(held, ["n": 2, "text": "longer than the first"])
        XCTAssertEqual(third, ["n": 3])
        XCTAssertEqual(try reader.nextJSONValue(), ["n": 4])
    }

    func testReadingResumesAtAnOffsetWithItsLineNumber() throws {
        try write()
        let first = try XCTUnwrap(LineReader(path: path, bufferSize: 16))
        _ = try first.nextLine { _ in }
        _ = try first.nextLine { _ in }
        let resumed = try XCTUnwrap(
            LineReader(path: path, offset: first.offset, lineNumber: first.lineNumber, bufferSize: 16))
        XCTAssertEqual(try readAll(resumed).first, lines[2])
        XCTAssertEqual(resumed.lineNumber, lines.count)
    }

    /// `nextLines` writes the ranges of the whole lines of one buffer at a time into the storage
    /// it is given (as many as that holds), each without its newline or carriage return, and hands
    /// over the buffer itself; the reader goes on in the buffer given back, and together the lines
    /// are every line, in order.
    func testLinesComeABufferAtATimeAndTogetherAreEveryLine() throws {
        try write()
        let reader = try XCTUnwrap(LineReader(path: path, bufferSize: 16))
        var read: [String] = []
        var calls = 0
        var taken: [UnsafeMutableBufferPointer<UInt8>] = []
        let ranges = UnsafeMutableBufferPointer<Range<Int>>.allocate(capacity: 3)
        defer {
            for buffer in taken { buffer.deallocate() }
            ranges.deallocate()
        }
        while let batch = try reader.nextLines(
            into: ranges,
            handingOver: { buffer, count, capacity in
                XCTAssertFalse(taken.contains { $0.baseAddress == buffer.baseAddress }, "a buffer handed over twice")
                taken.append(buffer)
                // Garbage in the new buffer: the reader must copy what it still needs into it.
                let replacement = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
                replacement.initialize(repeating: 0x2A)
                let lines = ranges[0..<count].map {
                    String(decoding: UnsafeBufferPointer(rebasing: buffer[$0]), as: UTF8.self)
                }
                return (lines, replacement)
            })
        {
            XCTAssertLessThanOrEqual(batch.count, 3)
            read += batch
            calls += 1
        }
        XCTAssertEqual(read, lines.map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 })
        XCTAssertGreaterThan(calls, 2)
        XCTAssertEqual(reader.lineNumber, lines.count)
        XCTAssertEqual(reader.offset, lines.joined(separator: "\n").utf8.count)
    }

    func testAFollowedFileHoldsBackALastLineWithoutItsNewline() throws {
        try write()
        let reader = try XCTUnwrap(LineReader(path: path, bufferSize: 16))
        reader.holdsPartialLine = true
        XCTAssertEqual(try readAll(reader).last, "crlf")
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("!\n".utf8))
        try handle.close()
        XCTAssertEqual(try readAll(reader), ["last without a newline!"])
    }
}

/// A test of lines in one file of its own, at `path` (made by the test, removed after it).
class LineFileTestCase: LeakCheckingTestCase {
    var path = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent("rivulet-lines-\(UUID().uuidString)")
            .path
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: path)
        super.tearDown()
    }
}
