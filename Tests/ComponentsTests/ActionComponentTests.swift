import Components
@_spi(Host) import Pipeline
import Reactive
import RivuletTestSupport
import XCTest

final class ActionComponentTests: LeakCheckingTestCase {
    func testOneWorkAtATimeTheRestRefused() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              taps:
                source: { events: [{ at: 0ms, next: a }, { at: 50ms, next: b }, { at: 150ms, next: c }, { at: 160ms, complete: true }] }
                ops:
                  - id: run
                    action: { events: { timeline: "{{ [{at: '100ms', next: . + '!'}, {at: '100ms', complete: true}] }}" } }
            sinks:
              - { stream: taps, record: out }
              - { stream: run.executing, record: executing }
              - { stream: run.enabled, record: enabled }
              - { stream: run.elements, record: elements }
              - { stream: run.errors, record: errors }
            """)
        XCTAssertEqual(harness.events("out"), ["100: \"a!\"", "250: \"c!\"", "250: completed"])
        XCTAssertEqual(harness.events("elements"), ["100: \"a!\"", "250: \"c!\"", "250: completed"])
        XCTAssertEqual(
            harness.events("executing"),
            ["0: false", "0: true", "100: false", "150: true", "250: false", "250: completed"])
        XCTAssertEqual(
            harness.events("enabled"),
            ["0: false", "0: true", "0: false", "100: true", "150: false", "250: true", "250: completed"])
        XCTAssertEqual(harness.events("errors").count, 2)
        XCTAssertTrue(harness.events("errors")[0].hasPrefix("50: "), "\(harness.events("errors"))")
        XCTAssertTrue(harness.events("errors")[0].contains("\"kind\":\"notEnabled\""))
        XCTAssertTrue(harness.events("errors")[0].contains("\"element\":\"b\""))
    }

    func testAFailedWorkIsAnErrorElementAndTheActionGoesOn() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              taps:
                source: { events: [{ at: 0ms, next: bad }, { at: 50ms, next: good }, { at: 60ms, complete: true }] }
                ops:
                  - id: run
                    action: { events: { timeline: "{{ . == 'bad' ? [{at: '10ms', error: 'server said no'}] : [{at: '10ms', next: .}, {at: '10ms', complete: true}] }}" } }
            sinks:
              - { stream: taps, record: out }
              - { stream: run.errors, record: errors }
            """)
        XCTAssertEqual(harness.events("out"), ["60: \"good\"", "60: completed"])
        XCTAssertEqual(harness.events("errors").count, 2)
        XCTAssertTrue(harness.events("errors")[0].contains("\"kind\":\"underlyingError\""))
        XCTAssertTrue(harness.events("errors")[0].contains("server said no"))
        guard case .completed? = harness.outcome else { return XCTFail("\(String(describing: harness.outcome))") }
    }

    func testEnabledIfRefusesUntilItsFirstTrue() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              gate:
                source: { events: [{ at: 20ms, next: false }, { at: 40ms, next: true }, { at: 100ms, complete: true }] }
              taps:
                source: { events: [{ at: 10ms, next: a }, { at: 30ms, next: b }, { at: 50ms, next: c }, { at: 60ms, complete: true }] }
                ops:
                  - id: run
                    action: { source: { events: [{ at: 0ms, next: done }, { at: 0ms, complete: true }] }, enabledIf: gate }
            sinks:
              - { stream: taps, record: out }
              - { stream: run.errors, record: errors }
              - { stream: run.enabled, record: enabled }
            """)
        XCTAssertEqual(harness.events("out"), ["50: \"done\"", "60: completed"])
        XCTAssertEqual(harness.events("errors").map { String($0.prefix(3)) }, ["10:", "30:", "60:"])
        XCTAssertEqual(
            harness.events("enabled"), ["0: false", "20: false", "40: true", "50: false", "50: true", "60: completed"])
    }

    func testAPageCounterFedBackFromTheActionsElements() throws {
        // The counter reads a side stream of an operator downstream of it: a feedback loop, not a cycle.
        let harness = try PipelineHarness().run(
            """
            streams:
              scrolls:
                source: { events: [{ at: 0ms, next: s }, { at: 100ms, next: s }, { at: 200ms, next: s }, { at: 300ms, next: s }, { at: 400ms, complete: true }] }
              page:
                source: { stream: load.elements }
                ops:
                  - scan: { seed: 1, accumulator: acc + 1 }
                  - startWith: 1
              loads:
                source: { stream: scrolls }
                ops:
                  - withLatestFrom: page
                  - filter: . < 3
                  - id: load
                    action: { events: { timeline: "{{ [{at: '10ms', next: .}, {at: '10ms', complete: true}] }}" } }
            sinks:
              - { stream: loads, record: out }
            """)
        XCTAssertEqual(harness.events("out"), ["10: 1", "110: 2", "400: completed"])
    }

    func testAStreamBuiltLateFromExecutingStillStartsWithFalse() throws {
        let harness = try PipelineHarness().run(
            """
            streams:
              taps:
                source: { events: [{ at: 10ms, next: a }, { at: 20ms, complete: true }] }
                ops:
                  - id: run
                    action: { events: [{ at: 5ms, next: x }, { at: 5ms, complete: true }] }
              spinner:
                source: { stream: run.executing }
                ops: [{ map: ". ? 'loading' : 'idle'" }]
            sinks:
              - { stream: taps, record: out }
              - { stream: spinner, record: spinner }
            """)
        XCTAssertEqual(harness.events("spinner"), ["0: \"idle\"", "10: \"loading\"", "15: \"idle\"", "20: completed"])
    }

    func testAMisspeltEnabledIfOrSideStreamIsALocatedError() {
        let diagnostics = PipelineHarness().diagnostics(
            """
            streams:
              valid:
                source: { events: [{ at: 0ms, next: true }] }
              taps:
                source: { events: [{ at: 0ms, next: 1 }] }
                ops:
                  - id: login
                    action: { source: { events: [{ at: 1s, next: ok }] }, enabledIf: vaild }
              spinner:
                source: { stream: login.executin }
            sinks:
              - { stream: taps, stdout: {} }
            """)
        XCTAssertEqual(diagnostics.count, 2, "\(diagnostics)")
        XCTAssertTrue(diagnostics[0].hasPrefix("8:74: unknown stream 'vaild'; did you mean 'valid'?"), "\(diagnostics)")
        XCTAssertTrue(
            diagnostics[1].hasPrefix("10:23: operator 'login' (action) has no side stream 'executin'"), "\(diagnostics)"
        )
    }
}
