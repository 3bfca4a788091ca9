import Pipeline
import RivuletTestSupport
import XCTest

@testable import Components

final class PostgresValuesTests: LeakCheckingTestCase {
    private typealias Kind = PostgresValues.TypeID

    private func read(_ text: String?, _ type: UInt32, _ numerics: PostgresValues.Numerics = .text) -> Value {
        PostgresValues.value(text, type: type, numerics: numerics)
    }

    func testEachTypeReadsAsTheValueAUserExpects() {
        XCTAssertEqual(read(nil, Kind.int4), .null)
        XCTAssertEqual(read("-42", Kind.int2), .int(-42))
        XCTAssertEqual(read("9223372036854775807", Kind.int8), .int(Int.max))
        XCTAssertEqual(read("2.5", Kind.float8), .double(2.5))
        XCTAssertEqual(read("NaN", Kind.float8), .string("NaN"))
        XCTAssertEqual(read("t", Kind.bool), .bool(true))
        XCTAssertEqual(read("f", Kind.bool), .bool(false))
        XCTAssertEqual(read(#"{"a": [1, null]}"#, Kind.jsonb), ["a": [1, nil]] as Value)
        XCTAssertEqual(read("\\x00ff41", Kind.bytea), .string("AP9B"))
        XCTAssertEqual(read("2026-12-03", 1082), .string("2026-12-03"))
        XCTAssertEqual(read("{1,2}", 1007), .string("{1,2}"))
    }

    func testNumericsAreExactTextUnlessNumbersAreAskedFor() {
        XCTAssertEqual(read("12.50", Kind.numeric), .string("12.50"))
        XCTAssertEqual(read("12.50", Kind.numeric, .number), .double(12.5))
        XCTAssertEqual(read("12", Kind.numeric, .number), .int(12))
        XCTAssertEqual(read("123456789012345678901234567890", Kind.numeric, .number), .double(1.2345678901234568e29))
        XCTAssertEqual(read("NaN", Kind.numeric, .number), .string("NaN"))
    }

    func testTimestampsAreMillisecondsSinceTheUnixEpoch() {
        XCTAssertEqual(read("1970-01-01 00:00:00+00", Kind.timestamptz), .int(0))
        XCTAssertEqual(read("2026-12-03 05:44:32.123456+00", Kind.timestamptz), .int(1_796_276_672_123))
        XCTAssertEqual(read("2026-12-03 07:44:32.1+02", Kind.timestamptz), .int(1_796_276_672_100))
        XCTAssertEqual(read("2026-12-03 05:14:32+05:30", Kind.timestamptz), .int(1_796_255_072_000))
        XCTAssertEqual(read("2026-12-03 05:44:32", Kind.timestamp), .int(1_796_276_672_000))
        XCTAssertEqual(read("1969-12-31 23:59:59.999+00", Kind.timestamptz), .int(-1))
        XCTAssertEqual(read("infinity", Kind.timestamptz), .string("infinity"))
        XCTAssertEqual(read("0044-03-15 00:00:00+00 BC", Kind.timestamptz), .string("0044-03-15 00:00:00+00 BC"))
    }

    func testValuesBecomeParametersInPostgresTextForms() {
        XCTAssertNil(PostgresValues.parameter(.null))
        XCTAssertEqual(PostgresValues.parameter(.bool(true)), "true")
        XCTAssertEqual(PostgresValues.parameter(.int(-3)), "-3")
        XCTAssertEqual(PostgresValues.parameter(.double(0.1)), "0.1")
        XCTAssertEqual(PostgresValues.parameter(["a": 1]), #"{"a":1}"#)
    }
}
