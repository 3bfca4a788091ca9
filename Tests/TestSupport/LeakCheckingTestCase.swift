import Foundation
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import XCTest

/// A test case that fails when it ends with more live sinks and disposables than it began with:
/// a subscription the test (or the code under test) never released. RxSwift's tests make the same
/// check with `Resources.total`.
open class LeakCheckingTestCase: XCTestCase {
    private var liveAtStart = 0

    open override func setUp() {
        super.setUp()
        liveAtStart = Resources.total
    }

    open override func tearDown() {
        LeakCheck.verify(since: liveAtStart) { XCTFail($0) }
        super.tearDown()
    }
}

/// The leak check itself, separate from XCTest so a test can prove that it fails.
public enum LeakCheck {
    /// Reports through `report` when more sinks and disposables are alive than `start`. Objects
    /// released on another thread (an HTTP task, a run loop's thread) get a second to go.
    public static func verify(since start: Int, report: (String) -> Void) {
        guard Resources.isCounting else { return }
        let deadline = Date().addingTimeInterval(1)
        while Resources.total > start && Date() < deadline { usleep(1000) }
        let leaked = Resources.total - start
        if leaked > 0 {
            report(
                "\(leaked) sink(s) or disposable(s) still alive at the end of the test: a subscription was not released"
            )
        }
    }
}
