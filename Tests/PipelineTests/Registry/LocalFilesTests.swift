import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// `LocalFiles`, as a plugin sees it: a path's folder, and a file's whole contents or nil.
final class LocalFilesTests: LeakCheckingTestCase {
    func testTheFolderOfAPath() {
        XCTAssertEqual(LocalFiles.directory(of: "a/b/c.yaml"), "a/b")
        XCTAssertEqual(LocalFiles.directory(of: "c.yaml"), ".")
        XCTAssertEqual(LocalFiles.directory(of: "/c.yaml"), "/")
    }

    func testAFileIsReadWholeAndAMissingOneIsNil() throws {
        let path = NSTemporaryDirectory() + "rivulet-local-files-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(path) }
        // Larger than one read's buffer (64 KiB), so the loop is exercised.
        let text = String(repeating: "line é\n", count: 20_000)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertEqual(LocalFiles.readText(path), text)
        XCTAssertEqual(LocalFiles.readBytes(path)?.count, text.utf8.count)
        XCTAssertNil(LocalFiles.readText(path + ".missing"))
        XCTAssertNil(LocalFiles.readBytes(NSTemporaryDirectory()), "a folder is not a file")
    }
}
