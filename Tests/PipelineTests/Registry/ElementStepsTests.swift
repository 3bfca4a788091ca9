@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
@_spi(Components) import ReactiveTesting
import RivuletTestSupport
import XCTest

final class ElementStepsTests: LeakCheckingTestCase {
    private struct Boom: Error, Equatable {}

    private let addOne: ElementStep = { .int($0.intValue! + 1) }
    private let keepEven: ElementStep = { $0.intValue! % 2 == 0 ? .some($0) : .none }
    private let double: ElementStep = { .int($0.intValue! * 2) }
    private let failOnEight: ElementStep = { element in
        if element.intValue == 8 { throw Boom() }
        return element
    }

    func testComposedStepsRunInOrderAndADropEndsTheElementThere() throws {
        for count in 1...5 {
            let steps = Array([addOne, keepEven, double, addOne, double].prefix(count))
            let composed = ElementSteps.compose(steps.map(ElementSteps.Made.init))
            for input in 0..<6 {
                var expected: Value? = .int(input)
                for step in steps { expected = try expected.flatMap { try step($0) } }
                XCTAssertEqual(try composed(.int(input)), expected, "\(count) steps on \(input)")
            }
        }
    }

    func testAFusedStretchEndsTheStreamAtTheElementAStepFailsOn() {
        let scheduler = TestScheduler(initialClock: 0)
        let source = scheduler.createHotObservable([
            .next(210, Value.int(1)), .next(220, 2), .next(230, 3), .next(240, 4), .completed(300),
        ])
        let stretch = ElementSteps.fused(
            [{ self.addOne }, { self.keepEven }, { self.double }, { self.failOnEight }].map(ElementSteps.Maker.init))
        let observer = scheduler.start { stretch(source.asObservable()) }
        XCTAssertEqual(observer.events, [.next(210, 4), .error(230, Boom())])
        XCTAssertEqual(source.subscriptions, [Subscription(200, 230)])
    }
}
