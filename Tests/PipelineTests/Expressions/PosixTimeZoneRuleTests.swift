import RivuletTestSupport
import XCTest

@testable import Pipeline

/// The POSIX TZ rule that ends a zone file: read in each of its forms, and the days it names.
final class PosixTimeZoneRuleTests: LeakCheckingTestCase {
    func testPosixRulesAreReadInEachOfTheirForms() {
        let paris = PosixTimeZoneRule("CET-1CEST,M3.5.0,M10.5.0/3")
        XCTAssertEqual(paris?.standard, .init(offset: 3600, abbreviation: "CET"))
        XCTAssertEqual(paris?.daylight?.kind, .init(offset: 7200, abbreviation: "CEST"))
        XCTAssertEqual(paris?.daylight?.end, .init(day: .monthWeekDay(month: 10, week: 5, weekday: 0), time: 10_800))
        let tehran = PosixTimeZoneRule("<+0330>-3:30")
        XCTAssertEqual(tehran?.standard, .init(offset: 12_600, abbreviation: "+0330"))
        XCTAssertNil(tehran?.daylight)
        // Day numbers: J never counts February 29, a bare number does; times may pass midnight.
        let julian = PosixTimeZoneRule("AAA3BBB,J60/-1,300/26:30")
        XCTAssertEqual(julian?.daylight?.kind.offset, -7200)
        XCTAssertEqual(julian?.daylight?.start, .init(day: .julian(60), time: -3600))
        XCTAssertEqual(julian?.daylight?.end, .init(day: .zeroBased(300), time: 95_400))
        XCTAssertEqual(
            PosixTimeZoneRule.second(of: .init(day: .julian(60), time: 0), year: 2028),
            TimeText.days(year: 2028, month: 3, day: 1) * 86_400)
        XCTAssertEqual(
            PosixTimeZoneRule.second(of: .init(day: .zeroBased(59), time: 0), year: 2028),
            TimeText.days(year: 2028, month: 2, day: 29) * 86_400)
        for bad in ["", "C1", "CET", "CET-1CEST,M13.1.0,M10.5.0", "CET-1CEST,M3.5.0", "CET-200", "<X", "CET-1 junk"] {
            XCTAssertNil(PosixTimeZoneRule(bad), bad)
        }
    }
}
