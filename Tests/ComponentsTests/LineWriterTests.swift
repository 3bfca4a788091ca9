import Foundation
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import RivuletTestSupport
import XCTest

@testable import Components
@_spi(Host) @_spi(Components) @testable import Pipeline

#if canImport(Glibc)
    import Glibc
#endif

/// The line writer: whole lines through a small buffer, the offset it counts, the write-back it
/// starts on a regular file as it goes (so the fsync at the end has little left to wait for), and
/// an old file cut on another thread before anything is written.
final class LineWriterTests: LineFileTestCase {

    private func lines(_ count: Int) -> [String] {
        (0..<count).map { "line \($0) " + String(repeating: "w", count: $0 % 50) }
    }

    func testARegularFileIsWrittenBackAsItGrowsAndKeepsEveryLine() throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        let writer = LineWriter(
            descriptor: descriptor, flushThreshold: 100, startsWriteBack: true, writeBackEvery: 1000)
        let written = lines(400)
        for line in written { writer.writeLine(line) }
        writer.flush()
        XCTAssertNoThrow(try writer.check())
        let size = written.reduce(0) { $0 + $1.utf8.count + 1 }
        XCTAssertEqual(writer.writtenOffset, size)
        // Started once for each 1,000 bytes written out (a write out is at least 100 bytes).
        XCTAssertGreaterThanOrEqual(writer.writeBacksStarted, size / 1100)
        XCTAssertLessThanOrEqual(writer.writeBacksStarted, size / 1000)
        XCTAssertEqual(fsync(descriptor), 0)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), written.joined(separator: "\n") + "\n")
    }

    func testNoWriteBackUnlessAsked() throws {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let writer = LineWriter(descriptor: ends[1], flushThreshold: 10, writeBackEvery: 10)
        for line in lines(20) { writer.writeLine(line) }
        writer.flush()
        XCTAssertEqual(writer.writeBacksStarted, 0, "a pipe, a terminal: nothing to write back")
        var buffer = [UInt8](repeating: 0, count: 4096)
        let read = Glibc.read(ends[0], &buffer, buffer.count)
        XCTAssertEqual(String(decoding: buffer.prefix(max(read, 0)), as: UTF8.self).split(separator: "\n").count, 20)
    }

    /// Write-back started over many buffers (the file sink's 64 KB ones) leaves every line whole.
    func testManyBuffersWrittenBackKeepEveryLine() throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { close(descriptor) }
        let writer = LineWriter(descriptor: descriptor, startsWriteBack: true, writeBackEvery: 64 * 1024)
        let many = lines(20_000)
        for line in many { writer.writeLine(line) }
        writer.flush()
        XCTAssertGreaterThan(writer.writeBacksStarted, 0)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), many.joined(separator: "\n") + "\n")
    }

    /// An old file cut on another thread: the lines written are all the file holds after, once
    /// the writer has waited for the cut (a flush with something buffered waits for it; a flush
    /// with nothing buffered does not need to).
    func testAFileCutInTheBackgroundHoldsOnlyTheNewLines() throws {
        for newLines in [300, 0] {
            try Data(repeating: 0x78, count: 3 << 20).write(to: URL(fileURLWithPath: path))
            let descriptor = open(path, O_WRONLY, 0o644)
            XCTAssertGreaterThanOrEqual(descriptor, 0)
            let writer = LineWriter(descriptor: descriptor, flushThreshold: 100, truncates: true)
            XCTAssertTrue(writer.truncatedInBackground)
            let written = lines(newLines)
            for line in written { writer.writeLine(line) }
            writer.flush()
            writer.waitForTruncation()
            XCTAssertNoThrow(try writer.check())
            close(descriptor)
            XCTAssertEqual(
                try String(contentsOfFile: path, encoding: .utf8),
                written.isEmpty ? "" : written.joined(separator: "\n") + "\n", "\(newLines) lines")
        }
    }

    /// A cut that fails is the writer's error (here: a descriptor opened for reading only).
    func testACutThatFailsIsAWriteError() throws {
        try Data(repeating: 0x78, count: 1000).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        let writer = LineWriter(descriptor: descriptor, truncates: true)
        writer.writeLine("a line")
        writer.flush()
        XCTAssertThrowsError(try writer.check()) { XCTAssertEqual(($0 as? WriteError)?.code, EINVAL) }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).count, 1000)
    }

    private func plainContext() -> ComponentContext {
        ComponentContext(
            scheduler: TestScheduler(), environment: ExpressionEnvironment(seed: 1), componentName: "file",
            location: SourceLocation(file: "p.yaml", line: 1, column: 1), baseDirectory: "/tmp", log: { _ in },
            streamResolver: { _ in nil }, sourceBuilder: { _ in throw CancellationError() },
            chainBuilder: { _, _, _ in throw CancellationError() }, sideStreams: [:], services: SharedServices(),
            checkpointKey: "main#0 file")
    }

    /// The file sink cuts an existing output of a megabyte or more on another thread, a smaller
    /// one by O_TRUNC; either way the file holds only what the run wrote.
    func testTheFileSinkCutsALargeOldOutputInTheBackground() throws {
        for (oldSize, inBackground) in [(FileSink.truncatedInBackgroundFrom, true), (1000, false), (0, false)] {
            try Data(repeating: 0x78, count: oldSize).write(to: URL(fileURLWithPath: path))
            let sink = try FileSink(
                path: path, format: "jsonl", append: false, columns: [], flushAfter: .seconds(1),
                context: plainContext())
            XCTAssertEqual(sink.truncatedInBackground, inBackground, "\(oldSize) bytes")
            try sink.receive(.next(try JSONParser.parse("{\"n\":\(oldSize)}")))
            try sink.close()
            XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "{\"n\":\(oldSize)}\n")
        }
        // No line at all: the close still waits for the cut, so the file is empty once it returns.
        try Data(repeating: 0x78, count: 4 << 20).write(to: URL(fileURLWithPath: path))
        let sink = try FileSink(
            path: path, format: "jsonl", append: false, columns: [], flushAfter: .seconds(1), context: plainContext())
        XCTAssertTrue(sink.truncatedInBackground)
        try sink.flush()
        try sink.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).count, 0)
    }

    /// The file sink asks for write-back on a regular file, not on a device.
    func testTheFileSinkWritesBackARegularFileOnly() throws {
        let context = plainContext()
        for (target, regular) in [(path, true), ("/dev/null", false)] {
            let sink = try FileSink(
                path: target, format: "jsonl", append: false, columns: [], flushAfter: .seconds(1), context: context)
            XCTAssertEqual(sink.writesBack, regular, target)
            try sink.close()
        }
    }
}
