import Foundation
@_spi(Host) import Pipeline
import StateStore
import XCTest

final class StateStoreTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "rivulet-store-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func testACheckpointIsSavedLoadedListedAndForgotten() throws {
        let store = try StateStore(path: folder + "/state.db")
        XCTAssertNil(try store.load("p"))
        try store.save("p", shape: ["main#source fixture", "main#0 scan"], state: ["main#0 scan": 3], complete: false)
        try store.save("p", shape: ["main#source fixture", "main#0 scan"], state: ["main#0 scan": 7], complete: true)
        try store.save("q", shape: [], state: [:], complete: false)
        let loaded = try XCTUnwrap(try store.load("p"))
        XCTAssertEqual(loaded.state, ["main#0 scan": 7])
        XCTAssertEqual(loaded.shape, ["main#source fixture", "main#0 scan"])
        XCTAssertTrue(loaded.complete)
        XCTAssertEqual(loaded.sequence, 2)
        XCTAssertEqual(try store.all().map(\.pipeline), ["p", "q"])
        XCTAssertTrue(try store.reset("p"))
        XCTAssertFalse(try store.reset("p"))
        XCTAssertEqual(try store.all().map(\.pipeline), ["q"])
    }

    func testAStoreReopensWithWhatItHeld() throws {
        do {
            let store = try StateStore(path: folder + "/state.db")
            try store.save("p", shape: ["a"], state: ["a": ["offset": 12]], complete: false)
        }
        let reopened = try StateStore(path: folder + "/state.db")
        XCTAssertEqual(try reopened.load("p")?.state, ["a": ["offset": 12]])
    }

    func testAFileThatIsNotAStoreIsRefusedAndLeftAsItIs() throws {
        let garbage = folder + "/notes.db"
        try "these are my notes\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try StateStore(path: garbage)) { error in
            XCTAssertTrue("\(error)".contains("not an SQLite database"), "\(error)")
        }
        XCTAssertEqual(try String(contentsOfFile: garbage, encoding: .utf8), "these are my notes\n")
    }

    func testAnotherApplicationsDatabaseIsRefused() throws {
        let path = folder + "/other.db"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada');"]
        try process.run()
        process.waitUntilExit()
        XCTAssertThrowsError(try StateStore(path: path)) { error in
            XCTAssertTrue("\(error)".contains("not a Rivulet state store"), "\(error)")
        }
    }

    func testOneRunnerOfAPipelineAtATime() throws {
        let first = try StateStore(path: folder + "/state.db")
        try first.lock(pipeline: "p")
        let second = try StateStore(path: folder + "/state.db")
        XCTAssertThrowsError(try second.lock(pipeline: "p")) { error in
            XCTAssertTrue("\(error)".contains("another runner of pipeline 'p'"), "\(error)")
        }
        XCTAssertNoThrow(try second.lock(pipeline: "q"), "other pipelines share the store")
        // A run that ends while the process goes on (run --watch) lets the next one take the lock.
        first.unlockAll()
        XCTAssertNoThrow(try second.lock(pipeline: "p"))
        XCTAssertThrowsError(try first.lock(pipeline: "p"), "and can take it again only when free")
    }

    func testAFolderThatCannotBeWrittenIsSaidClearly() throws {
        // Root writes anywhere a mode allows nothing; /proc refuses even root.
        let path = getuid() == 0 ? "/proc/rivulet-state.db" : folder + "/locked/state.db"
        if getuid() != 0 {
            try FileManager.default.createDirectory(atPath: folder + "/locked", withIntermediateDirectories: true)
            chmod(folder + "/locked", 0o555)
        }
        XCTAssertThrowsError(try StateStore(path: path)) { error in
            XCTAssertTrue("\(error)".contains("cannot open the state store"), "\(error)")
            XCTAssertTrue("\(error)".contains("must be writable"), "\(error)")
        }
    }
}
