/// Times written as text, for `parseTime` and `formatTime`: RFC 3339, epoch numbers, and
/// strftime-style patterns. A time is an integer of milliseconds since the Unix epoch (UTC).
///
/// Calendar arithmetic is done here (proleptic Gregorian, no leap seconds) rather than with the C
/// library, whose parsing depends on the process's locale and time zone.
enum TimeText {
    /// A date and time of day on the calendar, in some zone.
    struct Civil: Equatable {
        var year = 1970
        var month = 1
        var day = 1
        var hour = 0
        var minute = 0
        var second = 0
        var millisecond = 0
    }

    /// Days since 1970-01-01 of a date on the proleptic Gregorian calendar.
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01.
    static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Milliseconds since the epoch of `civil`, read in a zone `offset` seconds east of UTC.
    static func milliseconds(_ civil: Civil, offset: Int) -> Int {
        let days = days(year: civil.year, month: civil.month, day: civil.day)
        let seconds = days * 86_400 + civil.hour * 3600 + civil.minute * 60 + civil.second - offset
        return seconds * 1000 + civil.millisecond
    }

    /// The calendar date and time of `milliseconds`, in a zone `offset` seconds east of UTC.
    static func civil(_ milliseconds: Int, offset: Int) -> Civil {
        let local = milliseconds + offset * 1000
        let (seconds, millisecond) = floorDivide(local, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let date = date(days: days)
        return Civil(
            year: date.year, month: date.month, day: date.day, hour: secondOfDay / 3600,
            minute: secondOfDay / 60 % 60, second: secondOfDay % 60, millisecond: millisecond)
    }

    static func floorDivide(_ a: Int, _ b: Int) -> (quotient: Int, remainder: Int) {
        let q = a / b
        let r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    // MARK: RFC 3339

    /// `2026-11-25T10:00:03Z`, `2026-11-25T11:00:03.250+01:00` (a space or `t` for the `T`, `z`
    /// for `Z`), or a date alone (its midnight, UTC); nil if it is none of them.
    static func parseRFC3339(_ text: Substring) -> Int? {
        var scanner = TimeScanner(text)
        var civil = Civil()
        guard let year = scanner.digits(exactly: 4), scanner.take("-"), let month = scanner.digits(exactly: 2),
            scanner.take("-"), let day = scanner.digits(exactly: 2)
        else { return nil }
        (civil.year, civil.month, civil.day) = (year, month, day)
        var offset = 0
        if !scanner.atEnd {
            guard scanner.take("T") || scanner.take("t") || scanner.take(" "), let hour = scanner.digits(exactly: 2),
                scanner.take(":"), let minute = scanner.digits(exactly: 2), scanner.take(":"),
                let second = scanner.digits(exactly: 2)
            else { return nil }
            (civil.hour, civil.minute, civil.second) = (hour, minute, second)
            if scanner.take(".") || scanner.take(",") {
                guard let fraction = scanner.fraction() else { return nil }
                civil.millisecond = fraction
            }
            guard let zone = scanner.offset() else { return nil }
            offset = zone
        }
        guard scanner.atEnd, civil.isValid(allowingLeapSecond: true) else { return nil }
        return milliseconds(civil, offset: offset)
    }

    /// RFC 3339 with milliseconds when there are any: `2026-11-25T10:00:03Z`, or with the zone's
    /// offset (`+01:00`) when it is not UTC.
    static func rfc3339(_ milliseconds: Int, offset: Int = 0) -> String {
        let civil = civil(milliseconds, offset: offset)
        var text =
            "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2))T"
            + "\(pad(civil.hour, 2)):\(pad(civil.minute, 2)):\(pad(civil.second, 2))"
        if civil.millisecond != 0 { text += ".\(pad(civil.millisecond, 3))" }
        text += offset == 0 ? "Z" : offsetText(offset, colon: true)
        return text
    }

    static func pad(_ number: Int, _ width: Int) -> String {
        let digits = String(abs(number))
        let padded = digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        return number < 0 ? "-" + padded : padded
    }

    static func offsetText(_ offset: Int, colon: Bool) -> String {
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        return sign + pad(minutes / 60, 2) + (colon ? ":" : "") + pad(minutes % 60, 2)
    }

    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
        "December",
    ]
    static let weekdayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
}

extension TimeText.Civil {
    /// Whether every field is in range (a leap second, 60, only where RFC 3339 allows it).
    func isValid(allowingLeapSecond: Bool = false) -> Bool {
        (1...12).contains(month) && (1...TimeText.daysIn(month: month, year: year)).contains(day)
            && (0...23).contains(hour) && (0...59).contains(minute)
            && (0...(allowingLeapSecond ? 60 : 59)).contains(second)
    }
}

/// Reads a time's text from left to right.
struct TimeScanner {
    private let characters: [Character]
    private(set) var position = 0

    init(_ text: Substring) { characters = Array(text) }

    var atEnd: Bool { position == characters.count }

    mutating func take(_ character: Character) -> Bool {
        guard position < characters.count, characters[position] == character else { return false }
        position += 1
        return true
    }

    /// A number of exactly `count` digits.
    mutating func digits(exactly count: Int) -> Int? {
        digits(from: count, to: count)
    }

    /// A number of `minimum` to `maximum` digits, as many as there are.
    mutating func digits(from minimum: Int, to maximum: Int) -> Int? {
        var value = 0
        var taken = 0
        while taken < maximum, position < characters.count, let digit = characters[position].wholeNumberValue,
            characters[position].isASCII
        {
            value = value * 10 + digit
            taken += 1
            position += 1
        }
        return taken >= minimum ? value : nil
    }

    /// Decimal digits after a point, as milliseconds (digits beyond the third are dropped).
    mutating func fraction() -> Int? {
        let start = position
        guard let value = digits(from: 1, to: 9) else { return nil }
        let count = position - start
        var milliseconds = value
        var digits = count
        while digits < 3 {
            milliseconds *= 10
            digits += 1
        }
        while digits > 3 {
            milliseconds /= 10
            digits -= 1
        }
        return milliseconds
    }

    /// `Z`, `+01:00`, `+0100` or `+01`: seconds east of UTC.
    mutating func offset() -> Int? {
        if take("Z") || take("z") { return 0 }
        let sign: Int
        if take("+") {
            sign = 1
        } else if take("-") || take("\u{2212}") {
            sign = -1
        } else {
            return nil
        }
        guard let hours = digits(exactly: 2), hours <= 23 else { return nil }
        _ = take(":")
        let minutes = digits(exactly: 2) ?? 0
        guard minutes <= 59 else { return nil }
        return sign * (hours * 3600 + minutes * 60)
    }

    /// One of `names` (or its first three letters), in any case: its index.
    mutating func name(_ names: [String]) -> Int? {
        for (index, name) in names.enumerated() {
            for candidate in [name, String(name.prefix(3))] where matches(candidate) {
                position += candidate.count
                return index
            }
        }
        return nil
    }

    private func matches(_ word: String) -> Bool {
        guard position + word.count <= characters.count else { return false }
        return String(characters[position..<position + word.count]).lowercased() == word.lowercased()
    }

    /// What is left, for messages.
    var rest: String { String(characters[position...]) }
}

/// What `parseTime`, `formatTime` and `now` do with values.
enum TimeFunctions {
    /// Below this magnitude, an epoch number is seconds (up to the year 5138, or back to -1199);
    /// from it, milliseconds. Negative numbers are classed by magnitude too.
    static let secondsBelow = 100_000_000_000.0
    /// The latest (and, negated, earliest) time there is: 100,000,000 days from the epoch in
    /// milliseconds, JavaScript's range (the years -271821 to 275760). Past it a number is out of
    /// range, an element error, so no later arithmetic on a time can overflow.
    static let maximumMilliseconds = 8_640_000_000_000_000

    /// `parseTime(value, format?)`: milliseconds since the epoch.
    static func parse(_ value: Value, format: Value?) throws -> Value {
        let formatText: String?
        switch format {
        case nil, .null?: formatText = nil
        case .string(let text)?: formatText = text
        case let other?:
            throw ExpressionRuntimeError("parseTime() expects a format string, got \(Operations.describe(other))")
        }
        let made = try formatText.flatMap { (text) throws(ExpressionRuntimeError) in try pattern(text, reading: true) }
        return try parse(value, format: formatText, pattern: made)
    }

    /// `parseTime` with the pattern of `format` already made.
    static func parse(_ value: Value, format: String?, pattern: TimeFormat?) throws -> Value {
        switch value {
        case .int(let number):
            return .int(try epochMilliseconds(Double(number), exactly: number, written: "\(number)", format: format))
        case .double(let number):
            return .int(try epochMilliseconds(number, exactly: nil, written: "\(number)", format: format))
        case .string(let text):
            let trimmed = text.trimming(\.isWhitespace)
            if let pattern {
                guard let milliseconds = pattern.parse(trimmed) else {
                    throw ExpressionRuntimeError("parseTime(): '\(text)' does not fit the format '\(format ?? "")'")
                }
                return .int(milliseconds)
            }
            // Integer text first: a double would round 19 digits, and `Int(Double)` of it could trap.
            if let integer = Int(trimmed) {
                return .int(try epochMilliseconds(Double(integer), exactly: integer, written: text, format: format))
            }
            if let number = Double(trimmed), trimmed.first.map({ $0.isNumber || "+-.".contains($0) }) == true {
                return .int(try epochMilliseconds(number, exactly: nil, written: text, format: format))
            }
            if format == nil, let milliseconds = TimeText.parseRFC3339(trimmed) { return .int(milliseconds) }
            throw ExpressionRuntimeError(
                "parseTime() cannot read '\(text)' as a time: write RFC 3339 (2026-11-25T10:00:03Z) or epoch "
                    + "seconds or milliseconds, or give a format such as '%d/%b/%Y:%H:%M:%S %z'")
        default:
            throw ExpressionRuntimeError(
                "parseTime() expects a string or a number, got \(Operations.describe(value))")
        }
    }

    /// The milliseconds of an epoch number (`exactly`: the same number when it is an integer, which
    /// is then computed without rounding; `written`: as the input wrote it, for errors): seconds
    /// below `secondsBelow` in magnitude unless the format says which; an error when it is not
    /// finite or out of range.
    static func epochMilliseconds(_ number: Double, exactly integer: Int?, written: String, format: String?) throws
        -> Int
    {
        guard number.isFinite else {
            throw ExpressionRuntimeError("parseTime(): '\(written)' is not a time (an epoch number must be finite)")
        }
        let seconds = format == "unix" || (format == nil && number.magnitude < secondsBelow)
        let milliseconds = seconds ? number * 1000 : number
        // The integer itself too: a double rounds the last digits of a large one.
        guard milliseconds.magnitude <= Double(maximumMilliseconds),
            seconds || (integer?.magnitude ?? 0) <= UInt(maximumMilliseconds)
        else {
            throw ExpressionRuntimeError(
                "parseTime(): '\(written)' \(seconds ? "seconds are" : "milliseconds are") "
                    + "out of range: a time is at most 100,000,000 days (8640000000000000 ms) from the epoch")
        }
        if let integer { return seconds ? integer * 1000 : integer }
        return Int(milliseconds.rounded(.down))
    }

    /// The pattern of a format, unless it names an epoch form (`unix`, `unix_ms`).
    static func pattern(_ format: String, reading: Bool) throws(ExpressionRuntimeError) -> TimeFormat? {
        if reading && (format == "unix" || format == "unix_ms") { return nil }
        do {
            let pattern = try TimeFormat(format)
            if reading { try pattern.checkReadable(format) }
            return pattern
        } catch {
            throw ExpressionRuntimeError(error.message)
        }
    }

    /// The zone called `name`, or the error naming it.
    static func zone(_ value: Value?) throws(ExpressionRuntimeError) -> TimeZoneRules {
        switch value {
        case nil, .null?: return .utc
        case .string(let name)?:
            guard let rules = TimeZoneRules.named(name) else {
                throw ExpressionRuntimeError(
                    "formatTime(): unknown time zone '\(name)'; give a name of the tz database, such as "
                        + "'Europe/Paris' or 'UTC'")
            }
            return rules
        case let other?:
            throw ExpressionRuntimeError("formatTime() expects a zone name, got \(Operations.describe(other))")
        }
    }

    /// `formatTime(ms, format?, zone?)`.
    static func format(_ value: Value, pattern: TimeFormat?, zone: TimeZoneRules) throws -> Value {
        let milliseconds: Int
        switch value {
        case .int(let number) where number.magnitude <= maximumMilliseconds: milliseconds = number
        case .double(let number) where number.isFinite && number.magnitude <= Double(maximumMilliseconds):
            milliseconds = Int(number.rounded(.down))
        case .int, .double:
            throw ExpressionRuntimeError(
                "formatTime(): \(value) is out of range: a time is at most 100,000,000 days (8640000000000000 ms) "
                    + "from the epoch")
        default:
            throw ExpressionRuntimeError(
                "formatTime() expects milliseconds since the epoch, got \(Operations.describe(value))")
        }
        let kind = zone.kind(at: milliseconds)
        guard let pattern else { return .string(TimeText.rfc3339(milliseconds, offset: kind.offset)) }
        return .string(pattern.format(milliseconds, offset: kind.offset, zoneName: kind.abbreviation))
    }

    /// The pattern of `formatTime`'s format argument (nil or null: RFC 3339).
    static func writingPattern(_ value: Value?) throws -> TimeFormat? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return try pattern(text, reading: false)
        case let other?:
            throw ExpressionRuntimeError("formatTime() expects a format string, got \(Operations.describe(other))")
        }
    }
}
