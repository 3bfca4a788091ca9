import Foundation
import Pipeline
import Postgres

/// PostgreSQL's values as elements' values, by the column's type: integers as integers, floats as
/// numbers, numerics as exact text (or numbers when asked), booleans, timestamps as milliseconds
/// since the Unix epoch (what `eventTime` reads), JSON parsed, NULL as null, and every other type
/// (dates, arrays, user-defined) in PostgreSQL's own text form.
///
/// Connections are made with `TimeZone=UTC` and `DateStyle=ISO`, so the text forms read here do
/// not depend on the server's settings.
enum PostgresValues {
    /// How `numeric` columns are read.
    enum Numerics: String, CaseIterable, Sendable {
        /// Exact, as the server writes them (`"12.50"`).
        case text
        /// As numbers: an integer when the value is whole and fits, else a double.
        case number
    }

    /// The type OIDs that have a reading of their own.
    enum TypeID {
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let int8: UInt32 = 20
        static let int2: UInt32 = 21
        static let int4: UInt32 = 23
        static let oid: UInt32 = 26
        static let json: UInt32 = 114
        static let float4: UInt32 = 700
        static let float8: UInt32 = 701
        static let timestamp: UInt32 = 1114
        static let timestamptz: UInt32 = 1184
        static let numeric: UInt32 = 1700
        static let jsonb: UInt32 = 3802
    }

    /// Connection options that fix the text forms of times.
    static let sessionOptions = "-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=iso_8601 -c extra_float_digits=3"

    /// A row read by a query as an object of its columns, each value typed by its column.
    static func object(of row: PostgresConnection.Row, numerics: Numerics) -> Value {
        var object = JSONObject()
        for index in row.columns.indices {
            object[row.columns[index]] = value(row.values[index], type: row.types[index], numerics: numerics)
        }
        return .object(object)
    }

    /// The value of `text` (nil for NULL) read from a column of type `type`.
    static func value(_ text: String?, type: UInt32, numerics: Numerics) -> Value {
        guard let text else { return .null }
        switch type {
        case TypeID.int2, TypeID.int4, TypeID.int8, TypeID.oid:
            return Int(text).map(Value.int) ?? .string(text)
        case TypeID.float4, TypeID.float8:
            return Double(text).flatMap { $0.isFinite ? Value.double($0) : Optional<Value>.none } ?? .string(text)
        case TypeID.numeric:
            guard numerics == .number else { return .string(text) }
            if let whole = Int(text) { return .int(whole) }
            return Double(text).flatMap { $0.isFinite ? Value.double($0) : Optional<Value>.none } ?? .string(text)
        case TypeID.bool:
            return .bool(text == "t")
        case TypeID.json, TypeID.jsonb:
            return (try? JSONParser.parse(text)) ?? .string(text)
        case TypeID.timestamp, TypeID.timestamptz:
            return epochMilliseconds(text).map(Value.int) ?? .string(text)
        case TypeID.bytea:
            // `\x0a1b…`: JSON has no bytes, so the bytes go as base64, as the `sqlite` source's BLOBs do.
            guard text.hasPrefix("\\x") else { return .string(text) }
            let digits = Array(text.utf8.dropFirst(2))
            var bytes: [UInt8] = []
            bytes.reserveCapacity(digits.count / 2)
            var index = 0
            while index + 1 < digits.count {
                guard let high = hexDigit(digits[index]), let low = hexDigit(digits[index + 1]) else {
                    return .string(text)
                }
                bytes.append(high << 4 | low)
                index += 2
            }
            return .string(Data(bytes).base64EncodedString())
        default:
            return .string(text)
        }
    }

    /// An element's value as a parameter's text (nil for null): booleans as `true`/`false`,
    /// objects and lists as their JSON, which PostgreSQL reads for `json`, `jsonb` and arrays of JSON.
    static func parameter(_ value: Value) -> String? {
        switch value {
        case .null: nil
        case .string(let text): text
        case .bool(let flag): flag ? "true" : "false"
        case .int(let number): String(number)
        case .double(let number): number.description
        case .array, .object: value.description
        }
    }

    /// `2026-12-03 05:44:32.123456+00` (a `timestamptz` in ISO style; a `timestamp` has no offset
    /// and is read as UTC) as milliseconds since the Unix epoch; nil for `infinity`, BC dates or
    /// anything else.
    static func epochMilliseconds(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var result = 0
            for byte in bytes[index..<index + digits] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                result = result * 10 + Int(byte - 0x30)
            }
            index += digits
            return result
        }
        func skip(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(digits: 4), skip("-"), let month = number(digits: 2), skip("-"),
            let day = number(digits: 2), skip(" "), let hour = number(digits: 2), skip(":"),
            let minute = number(digits: 2), skip(":"), let second = number(digits: 2)
        else { return nil }
        var milliseconds = 0
        if skip(".") {
            var scale = 100
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                milliseconds += Int(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
        }
        var offsetSeconds = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(digits: 2) else { return nil }
            var seconds = hours * 3600
            if skip(":") {
                guard let minutes = number(digits: 2) else { return nil }
                seconds += minutes * 60
                if skip(":") {
                    guard let extra = number(digits: 2) else { return nil }
                    seconds += extra
                }
            }
            offsetSeconds = sign * seconds
        }
        guard index == bytes.count else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return seconds * 1000 + milliseconds
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }
}
