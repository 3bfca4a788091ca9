import Foundation
import XCTest

@testable import Components

/// A thread's heap grown at once: its mapping (what `mprotect` made usable) is as large as
/// what it was grown to afterwards, where a new thread's starts at about 132 KiB and grows a page at a
/// time.
final class ThreadHeapTests: XCTestCase {
    /// The size of the memory map entry holding `address`, from /proc/self/maps.
    private static func mappingSize(holding address: UInt) throws -> Int? {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        for line in maps.split(separator: "\n") {
            let bounds = line.split(separator: " ")[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            if bounds.count == 2, (bounds[0]..<bounds[1]).contains(address) { return Int(bounds[1] - bounds[0]) }
        }
        return nil
    }

    /// Runs `body` on a new thread (a heap of its own) and waits for it.
    private func onANewThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.start()
        done.wait()
    }

    func testAGrownHeapIsMappedWholeAndANewOneIsNot() throws {
        final class Sizes: @unchecked Sendable { var before = 0, after = 0 }
        let sizes = Sizes()
        onANewThread {
            let block = malloc(64)!
            defer { free(block) }
            let address = UInt(bitPattern: block)
            sizes.before = (try? Self.mappingSize(holding: address)) ?? -1
            ThreadHeap.grow(to: ThreadHeap.helperBytes)
            sizes.after = (try? Self.mappingSize(holding: address)) ?? -1
        }
        XCTAssertGreaterThan(sizes.before, 0, "the new thread's heap is mapped")
        // glibc makes at most 8 heaps a core, then threads share them: one may be grown already.
        if sizes.before >= ThreadHeap.helperBytes { throw XCTSkip("the thread shares a heap grown before") }
        XCTAssertGreaterThanOrEqual(sizes.after, ThreadHeap.helperBytes, "grown at once")
    }
}
