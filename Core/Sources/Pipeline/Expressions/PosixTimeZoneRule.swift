/// The POSIX TZ rule at the end of a TZif file (RFC 8536, section 3.3), such as
/// `CET-1CEST,M3.5.0,M10.5.0/3`: the zone's kinds for every year past the file's table of
/// transitions (which usually stops in 2037, or at today's date in "slim" files).
struct PosixTimeZoneRule: Sendable, Equatable {
    /// A day of the year on which summer time starts or ends.
    enum Day: Sendable, Equatable {
        /// `Jn`: day 1 to 365, February 29 never counted.
        case julian(Int)
        /// `n`: day 0 to 365, February 29 counted.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 Sunday) of week `w` (5: the last) of month `m`.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }

    struct Change: Sendable, Equatable {
        let day: Day
        /// Seconds after the local midnight of `day` (negative, or past a day, allowed).
        let time: Int
    }

    let standard: TimeZoneRules.Kind
    /// Summer time and when it starts and ends; nil when the zone keeps one offset all year.
    let daylight: (kind: TimeZoneRules.Kind, start: Change, end: Change)?

    static func == (a: Self, b: Self) -> Bool {
        a.standard == b.standard && a.daylight?.kind == b.daylight?.kind && a.daylight?.start == b.daylight?.start
            && a.daylight?.end == b.daylight?.end
    }

    /// The kind in force at `seconds` since the epoch.
    func kind(atSecond seconds: Int) -> TimeZoneRules.Kind {
        guard let daylight else { return standard }
        let year = TimeText.civil(seconds * 1000, offset: standard.offset).year
        // Summer time starts at a time given in standard time and ends at one given in summer time.
        let start = Self.second(of: daylight.start, year: year) - standard.offset
        let end = Self.second(of: daylight.end, year: year) - daylight.kind.offset
        let inSummer = start < end ? (start <= seconds && seconds < end) : (seconds < end || start <= seconds)
        return inSummer ? daylight.kind : standard
    }

    /// Seconds since the epoch, in local time, of a change in `year`.
    static func second(of change: Change, year: Int) -> Int {
        let firstOfYear = TimeText.days(year: year, month: 1, day: 1)
        let day: Int
        switch change.day {
        case .julian(let number):
            // Days after February count one more in a leap year, since J never counts the 29th.
            day = firstOfYear + number - 1 + (TimeText.isLeap(year) && number >= 60 ? 1 : 0)
        case .zeroBased(let number):
            day = firstOfYear + number
        case .monthWeekDay(let month, let week, let weekday):
            let first = TimeText.days(year: year, month: month, day: 1)
            let firstWeekday = TimeText.floorDivide(first + 4, 7).remainder  // 1970-01-01 was a Thursday.
            var dayOfMonth = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            while dayOfMonth > TimeText.daysIn(month: month, year: year) { dayOfMonth -= 7 }
            day = first + dayOfMonth - 1
        }
        return day * 86_400 + change.time
    }

    /// The rule written `text`; nil if it is not one (or is empty: no rule).
    init?(_ text: String) {
        var reader = PosixRuleReader(Array(text.utf8))
        guard let standardName = reader.name(), let standardOffset = reader.offset() else { return nil }
        standard = TimeZoneRules.Kind(offset: standardOffset, abbreviation: standardName)
        if reader.atEnd {
            daylight = nil
            return
        }
        guard let daylightName = reader.name() else { return nil }
        var daylightOffset = standardOffset + 3600
        if !reader.peek(",") {
            guard let offset = reader.offset() else { return nil }
            daylightOffset = offset
        }
        // A zone with a summer name and no rule uses the US rule POSIX gives as the default.
        var start = Change(day: .monthWeekDay(month: 3, week: 2, weekday: 0), time: 7200)
        var end = Change(day: .monthWeekDay(month: 11, week: 1, weekday: 0), time: 7200)
        if reader.take(",") {
            guard let first = reader.change(), reader.take(","), let second = reader.change() else { return nil }
            (start, end) = (first, second)
        }
        guard reader.atEnd else { return nil }
        daylight = (TimeZoneRules.Kind(offset: daylightOffset, abbreviation: daylightName), start, end)
    }
}

/// Reads the parts of a POSIX TZ rule from left to right.
private struct PosixRuleReader {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position == bytes.count }

    func peek(_ character: Character) -> Bool { position < bytes.count && bytes[position] == character.asciiValue }

    mutating func take(_ character: Character) -> Bool {
        guard peek(character) else { return false }
        position += 1
        return true
    }

    /// `CET`, or a quoted name such as `<+0330>`.
    mutating func name() -> String? {
        let start = position
        if take("<") {
            while position < bytes.count, bytes[position] != UInt8(ascii: ">") { position += 1 }
            guard position > start + 1, take(">") else { return nil }
            return String(decoding: bytes[start + 1..<position - 1], as: UTF8.self)
        }
        while position < bytes.count, (bytes[position] | 0x20) >= UInt8(ascii: "a"),
            (bytes[position] | 0x20) <= UInt8(ascii: "z")
        {
            position += 1
        }
        return position - start >= 3 ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
    }

    /// A POSIX offset, hours west of UTC (`-1`, `5`, `-3:30`), as seconds east of UTC.
    mutating func offset() -> Int? {
        guard let west = time() else { return nil }
        return -west
    }

    /// `[+-]hh[:mm[:ss]]` as seconds (hours up to 167, as RFC 8536 allows).
    mutating func time() -> Int? {
        var sign = 1
        if take("-") { sign = -1 } else { _ = take("+") }
        guard let hours = number(upTo: 3), hours <= 167 else { return nil }
        var seconds = hours * 3600
        if take(":") {
            guard let minutes = number(upTo: 2), minutes < 60 else { return nil }
            seconds += minutes * 60
            if take(":") {
                guard let rest = number(upTo: 2), rest < 60 else { return nil }
                seconds += rest
            }
        }
        return sign * seconds
    }

    /// `Mm.w.d`, `Jn` or `n`, then `/time` (default 02:00).
    mutating func change() -> PosixTimeZoneRule.Change? {
        let day: PosixTimeZoneRule.Day
        if take("M") {
            guard let month = number(upTo: 2), (1...12).contains(month), take("."), let week = number(upTo: 1),
                (1...5).contains(week), take("."), let weekday = number(upTo: 1), weekday <= 6
            else { return nil }
            day = .monthWeekDay(month: month, week: week, weekday: weekday)
        } else if take("J") {
            guard let number = number(upTo: 3), (1...365).contains(number) else { return nil }
            day = .julian(number)
        } else {
            guard let number = number(upTo: 3), number <= 365 else { return nil }
            day = .zeroBased(number)
        }
        var time = 7200
        if take("/") {
            guard let given = self.time() else { return nil }
            time = given
        }
        return PosixTimeZoneRule.Change(day: day, time: time)
    }

    /// A decimal number of 1 to `count` digits.
    mutating func number(upTo count: Int) -> Int? {
        var value = 0
        var taken = 0
        while taken < count, position < bytes.count, bytes[position] >= UInt8(ascii: "0"),
            bytes[position] <= UInt8(ascii: "9")
        {
            value = value * 10 + Int(bytes[position] - UInt8(ascii: "0"))
            taken += 1
            position += 1
        }
        return taken > 0 ? value : nil
    }
}
