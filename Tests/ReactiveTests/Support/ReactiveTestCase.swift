@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import RivuletTestSupport
import XCTest

/// The base of the runtime's tests: makes test schedulers and, after every test, checks that no
/// test observable of theirs is left subscribed.
class ReactiveTestCase: LeakCheckingTestCase {
    private var schedulers: [TestScheduler] = []

    /// A test scheduler checked for open subscriptions when the test ends.
    func makeScheduler(initialClock: Int = 0, resolution: RxTimeInterval = .seconds(1)) -> TestScheduler {
        let scheduler = TestScheduler(initialClock: initialClock, resolution: resolution)
        schedulers.append(scheduler)
        return scheduler
    }

    override func tearDown() {
        for scheduler in schedulers {
            XCTAssertEqual(scheduler.openSubscriptions, [], "a test observable was left subscribed")
        }
        schedulers = []
        super.tearDown()
    }
}

/// `next(element)` at `time`.
func next<Element>(_ time: Int, _ element: Element) -> Recorded<Event<Element>> {
    Recorded(time: time, value: .next(element))
}

/// `completed` at `time`.
func completed<Element>(_ time: Int, _ type: Element.Type = Element.self) -> Recorded<Event<Element>> {
    Recorded(time: time, value: .completed)
}

/// `error(error)` at `time`.
func error<Element>(_ time: Int, _ error: any Error, _ type: Element.Type = Element.self) -> Recorded<Event<Element>> {
    Recorded(time: time, value: .error(error))
}

let testError = TestError(1)
let testError1 = TestError(1)
let testError2 = TestError(2)
