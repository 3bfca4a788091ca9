@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@_spi(Host) @_spi(Components) @testable import Pipeline

final class TimeTextTests: LeakCheckingTestCase {
    private let scope = EvaluationScope(environment: ExpressionEnvironment(seed: 1))

    private func eval(_ text: String, _ element: Value = .null) throws -> Value {
        try Expression(text).evaluate(element, in: scope)
    }

    /// 2026-11-25T10:00:03Z.
    private let morning = 1_795_600_803_000

    func testRFC3339IsReadWithAnyOffsetAndFractionAndWrittenBackInUTC() throws {
        XCTAssertEqual(try eval("parseTime('2026-11-25T10:00:03Z')"), .int(morning))
        XCTAssertEqual(try eval("parseTime('2026-11-25T11:00:03+01:00')"), .int(morning))
        XCTAssertEqual(try eval("parseTime('2026-11-25 05:00:03.25-05:00')"), .int(morning + 250))
        XCTAssertEqual(try eval("parseTime('2026-11-25t10:00:03.123456789z')"), .int(morning + 123))
        XCTAssertEqual(try eval("parseTime('2026-11-25')"), .int(morning - 10 * 3_600_000 - 3000))
        XCTAssertEqual(try eval("formatTime(\(morning))"), "2026-11-25T10:00:03Z")
        XCTAssertEqual(try eval("formatTime(\(morning + 40))"), "2026-11-25T10:00:03.040Z")
        XCTAssertEqual(try eval("formatTime(-1)"), "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(try eval("formatTime(parseTime('2000-02-29T23:59:59Z'))"), "2000-02-29T23:59:59Z")
    }

    func testEpochNumbersAreSecondsBelowAHundredBillionAndMillisecondsAbove() throws {
        XCTAssertEqual(try eval("parseTime(1795600803)"), .int(morning))
        XCTAssertEqual(try eval("parseTime(1795600803.5)"), .int(morning + 500))
        XCTAssertEqual(try eval("parseTime(\(morning))"), .int(morning))
        XCTAssertEqual(try eval("parseTime('1795600803')"), .int(morning))
        XCTAssertEqual(try eval("parseTime('\(morning)', 'unix_ms')"), .int(morning))
        XCTAssertEqual(try eval("parseTime(5, 'unix')"), .int(5000))
    }

    func testAnEpochNumberIsClassedByItsMagnitudeAndRefusedPastAHundredMillionDays() throws {
        // One rule for integers, fractions and text alike, negative numbers included.
        XCTAssertEqual(try eval("parseTime(99999999999)"), .int(99_999_999_999_000))
        XCTAssertEqual(try eval("parseTime(100000000000)"), .int(100_000_000_000))
        XCTAssertEqual(try eval("parseTime(-99999999999)"), .int(-99_999_999_999_000))
        XCTAssertEqual(try eval("parseTime(-86400)"), .int(-86_400_000))
        XCTAssertEqual(try eval("parseTime(-1e14)"), .int(-100_000_000_000_000))
        XCTAssertEqual(try eval("parseTime(1e15)"), .int(1_000_000_000_000_000))
        XCTAssertEqual(try eval("parseTime('1e15')"), .int(1_000_000_000_000_000))
        XCTAssertEqual(try eval("parseTime(8640000000000000)"), .int(8_640_000_000_000_000))
        XCTAssertEqual(try eval("parseTime(-8640000000000000)"), .int(-8_640_000_000_000_000))
        XCTAssertEqual(try eval("parseTime('8640000000000', 'unix')"), .int(8_640_000_000_000_000))
        XCTAssertEqual(try eval("formatTime(8640000000000000)"), "275760-09-13T00:00:00Z")
        XCTAssertEqual(try eval("formatTime(-8640000000000000, '%F')"), "-271821-04-20")
        for text in [
            "parseTime(9223372036854775807)", "parseTime(8640000000000001)", "parseTime(-8640000000000001)",
            "parseTime(1e19)", "parseTime(8640000000001, 'unix')", "parseTime(9223372036854775807, 'unix')",
            "parseTime(1e300, 'unix_ms')", "formatTime(8640000000000001)", "formatTime(-1e300)",
            "formatTime(9223372036854775807, '%s', 'Europe/Paris')",
        ] {
            XCTAssertThrowsError(try eval(text), text) { error in
                XCTAssertTrue("\(error)".contains("out of range"), "\(text): \(error)")
            }
        }
    }

    func testNumberTextOutOfRangeIsAnElementErrorNotACrash() {
        // Each of these once trapped (SIGILL) converting a double to an integer, even under onError: skip.
        for text in [
            "1e400", "-1e400", "Infinity", "-Infinity", "inf", "nan", "1e19", "-1e19", "9999999999999999999999",
            "-9999999999999999999999", "9223372036854775807", "9223372036854775808", "1e15000", "0x1p70",
            "  1e400  ", "+1e400", ".5e400", "1e-400",
        ] {
            for format in ["", ", 'unix'", ", 'unix_ms'"] {
                let call = "parseTime(.\(format))"
                do {
                    let value = try eval(call, .string(text))
                    // Only a number in range may come back, and then within the bound.
                    XCTAssertLessThanOrEqual(
                        value.intValue?.magnitude ?? .max, 8_640_000_000_000_000, "\(call) of \(text)")
                } catch {
                    XCTAssertTrue(error is ExpressionRuntimeError, "\(call) of \(text): \(error)")
                }
            }
        }
        XCTAssertThrowsError(try eval("parseTime('1e400')")) { error in
            XCTAssertTrue("\(error)".contains("'1e400' is not a time"), "\(error)")
        }
        XCTAssertThrowsError(try eval("parseTime('1e19')")) { error in
            XCTAssertTrue("\(error)".contains("'1e19' milliseconds are out of range"), "\(error)")
        }
    }

    func testPatternsReadAndWriteLogTimes() throws {
        let apache = "'%d/%b/%Y:%H:%M:%S %z'"
        XCTAssertEqual(try eval("parseTime('25/Nov/2026:11:00:03 +0100', \(apache))"), .int(morning))
        XCTAssertEqual(try eval("formatTime(\(morning), \(apache))"), "25/Nov/2026:10:00:03 +0000")
        XCTAssertEqual(try eval("parseTime('2026-11-25 10:00:03', '%F %T')"), .int(morning))
        XCTAssertEqual(
            try eval("formatTime(\(morning), '%A %e %B %Y, day %j, %s.%f')"),
            "Wednesday 25 November 2026, day 329, 1795600803.000")
        XCTAssertEqual(try eval("parseTime('Wed, 25 nov 2026 10:00:03', '%a, %d %b %Y %T')"), .int(morning))
    }

    func testZonesComeFromTheTzDatabaseWithTheirSummerTime() throws {
        XCTAssertEqual(try eval("formatTime(\(morning), null, 'Europe/Paris')"), "2026-11-25T11:00:03+01:00")
        let july = try XCTUnwrap(try eval("parseTime('2026-07-01T12:00:00Z')").intValue)
        XCTAssertEqual(try eval("formatTime(\(july), null, 'Europe/Paris')"), "2026-07-01T14:00:00+02:00")
        XCTAssertEqual(try eval("formatTime(\(july), '%H:%M %Z', 'America/New_York')"), "08:00 EDT")
        XCTAssertEqual(try eval("formatTime(\(morning), '%H:%M %Z', .zone)", ["zone": "Asia/Kolkata"]), "15:30 IST")
        XCTAssertEqual(try eval("formatTime(\(morning), '%H:%M %z', 'UTC')"), "10:00 +0000")
    }

    func testPastTheZoneFilesTableTheirPosixRuleGivesSummerTime() throws {
        // The tables of the usual files end in 2037; `date` and Python read the rule at their end.
        let cases: [(String, String, String)] = [
            ("2038-07-01T12:00:00Z", "Europe/Paris", "14:00 +0200 CEST"),
            ("2038-01-15T12:00:00Z", "Europe/Paris", "13:00 +0100 CET"),
            ("2100-03-28T00:59:59Z", "Europe/Paris", "01:59 +0100 CET"),  // last Sunday of March, 01:00 UTC
            ("2100-03-28T01:00:00Z", "Europe/Paris", "03:00 +0200 CEST"),
            ("2100-10-31T00:59:59Z", "Europe/Paris", "02:59 +0200 CEST"),
            ("2100-10-31T01:00:00Z", "Europe/Paris", "02:00 +0100 CET"),
            ("2050-07-04T16:00:00Z", "America/New_York", "12:00 -0400 EDT"),
            ("2050-12-25T17:00:00Z", "America/New_York", "12:00 -0500 EST"),
            ("2045-01-01T00:00:00Z", "Australia/Sydney", "11:00 +1100 AEDT"),  // summer in the south
            ("2045-07-01T00:00:00Z", "Australia/Sydney", "10:00 +1000 AEST"),
            ("2060-06-01T00:00:00Z", "Asia/Tokyo", "09:00 +0900 JST"),
            ("2060-06-01T00:00:00Z", "Asia/Kolkata", "05:30 +0530 IST"),
        ]
        for (time, zone, expected) in cases {
            let milliseconds = try XCTUnwrap(try eval("parseTime('\(time)')").intValue)
            XCTAssertEqual(
                try eval("formatTime(\(milliseconds), '%H:%M %z %Z', '\(zone)')"), .string(expected), "\(time) \(zone)")
        }
    }

    func testBadInputIsAnElementErrorThatSaysWhatWasExpected() {
        XCTAssertThrowsError(try eval("parseTime('yesterday')")) { error in
            XCTAssertTrue("\(error)".contains("cannot read 'yesterday' as a time"), "\(error)")
        }
        XCTAssertThrowsError(try eval("parseTime('2026-13-01T00:00:00Z')"))
        XCTAssertThrowsError(try eval("parseTime('2026-02-29T00:00:00Z')"))
        XCTAssertThrowsError(try eval("parseTime('2026-11-25', '%d/%m/%Y')")) { error in
            XCTAssertTrue("\(error)".contains("does not fit the format '%d/%m/%Y'"), "\(error)")
        }
        XCTAssertThrowsError(try eval("parseTime(true)"))
        XCTAssertThrowsError(try eval("formatTime('noon')"))
        XCTAssertThrowsError(try eval("formatTime(0, null, .zone)", ["zone": "Mars/Olympus"])) { error in
            XCTAssertTrue("\(error)".contains("unknown time zone 'Mars/Olympus'"), "\(error)")
        }
        XCTAssertThrowsError(try eval("formatTime(0, null, '../../etc/passwd')"))
    }

    func testAWrittenFormatOrZoneIsCheckedWhenTheExpressionIsRead() {
        for text in [
            "parseTime(.t, '%Y-%Q')", "parseTime(.t, '%Y %')", "parseTime(.t, '%Z')",
            "formatTime(.t, '%H', 'Nowhere/City')",
        ] {
            XCTAssertThrowsError(try Expression(text), text) { error in
                XCTAssertTrue(error is ExpressionSyntaxError, "\(text): \(error)")
            }
        }
        XCTAssertNoThrow(try Expression("formatTime(.t, '%j', 'Europe/Paris')"))
    }

    func testTheCalendarRoundTripsEveryDayOfFourHundredYears() throws {
        let roundTrip = try Expression("formatTime(parseTime(.), '%F')")
        let next = try Expression("formatTime(parseTime(.) + 86400000, '%F')")
        var day: Value = "1900-01-01"
        var count = 0
        while day != "2300-01-01" {
            XCTAssertEqual(try roundTrip.evaluate(day, in: scope), day)
            day = try next.evaluate(day, in: scope)
            count += 1
        }
        XCTAssertEqual(count, 146_097)  // 400 Gregorian years
    }

    func testDurationLiteralsAreMilliseconds() throws {
        XCTAssertEqual(try eval("30s"), 30_000)
        XCTAssertEqual(try eval("1.5m + 250ms"), 90_250)
        XCTAssertEqual(try eval("2h - 1d"), .int(-79_200_000))
        XCTAssertEqual(try eval("0.5ms"), 0.5)
        XCTAssertEqual(try eval("formatTime(parseTime('2026-11-25T10:00:00Z') + 90s)"), "2026-11-25T10:01:30Z")
        XCTAssertEqual(
            try eval(
                "parseTime(.end) - parseTime(.start) > 30s",
                ["start": "2026-11-25T10:00:00Z", "end": "2026-11-25T10:00:31Z"]), true)
        XCTAssertThrowsError(try Expression("5sec"))
    }
}
