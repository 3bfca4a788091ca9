import Foundation
import RivuletTestSupport
import XCTest

@testable import Components

final class DirectoryEntriesTests: LeakCheckingTestCase {
    func testListsNamesWithTheirInodesAndNothingForAFolderThatCannotBeRead() throws {
        let folder = NSTemporaryDirectory() + "rivulet-entries-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/a.log", contents: Data("x".utf8)))
        var status = stat()
        XCTAssertEqual(stat(folder + "/a.log", &status), 0)
        let entries = directoryEntries(of: folder).filter { !$0.name.hasPrefix(".") }
        XCTAssertEqual(entries.map(\.name), ["a.log"])
        XCTAssertEqual(entries.first?.inode, UInt64(status.st_ino))
        XCTAssertTrue(directoryEntries(of: folder + "/missing").isEmpty)
    }
}
