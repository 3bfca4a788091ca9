/// A strftime-style pattern (`%Y-%m-%d %H:%M:%S %z`), checked once and then used to read or
/// write times. The directives are those of C's strftime that read the same way everywhere
/// (no locale): see `directives`.
struct TimeFormat {
    enum Piece: Equatable {
        case literal(Character)
        case year, month, day, dayPadded, hour, minute, second, fraction, offset, zoneName
        case monthName, monthAbbreviation, weekdayName, weekdayAbbreviation, dayOfYear, epochSeconds
    }

    /// Each directive with what it stands for, for messages and docs.
    static let directives: [(Character, String)] = [
        ("Y", "year, 4 digits"), ("m", "month 01-12"), ("d", "day 01-31"), ("e", "day, space-padded"),
        ("H", "hour 00-23"), ("M", "minute"), ("S", "second"), ("f", "milliseconds (reads 1-9 digits)"),
        ("z", "offset +hhmm (reads Z, +hh:mm, +hhmm)"), ("Z", "zone abbreviation (writing only)"),
        ("b", "month, Jan"), ("B", "month, January"), ("a", "weekday, Mon"), ("A", "weekday, Monday"),
        ("j", "day of the year (writing only)"), ("s", "seconds since the epoch"), ("F", "%Y-%m-%d"),
        ("T", "%H:%M:%S"), ("%", "a %"),
    ]

    let pieces: [Piece]

    /// A problem with a pattern as written.
    struct Problem: Error {
        let message: String
    }

    init(_ pattern: String) throws(Problem) {
        var pieces: [Piece] = []
        var characters = pattern.makeIterator()
        while let character = characters.next() {
            guard character == "%" else {
                pieces.append(.literal(character))
                continue
            }
            guard let directive = characters.next() else {
                throw Problem(message: "time format '\(pattern)' ends with a lone %; write %% for a %")
            }
            switch directive {
            case "Y": pieces.append(.year)
            case "m": pieces.append(.month)
            case "d": pieces.append(.day)
            case "e": pieces.append(.dayPadded)
            case "H": pieces.append(.hour)
            case "M": pieces.append(.minute)
            case "S": pieces.append(.second)
            case "f": pieces.append(.fraction)
            case "z": pieces.append(.offset)
            case "Z": pieces.append(.zoneName)
            case "b", "h": pieces.append(.monthAbbreviation)
            case "B": pieces.append(.monthName)
            case "a": pieces.append(.weekdayAbbreviation)
            case "A": pieces.append(.weekdayName)
            case "j": pieces.append(.dayOfYear)
            case "s": pieces.append(.epochSeconds)
            case "F": pieces += [.year, .literal("-"), .month, .literal("-"), .day]
            case "T": pieces += [.hour, .literal(":"), .minute, .literal(":"), .second]
            case "%": pieces.append(.literal("%"))
            default:
                let known = Self.directives.map { "%\($0.0)" }.joined(separator: " ")
                throw Problem(
                    message: "time format '\(pattern)' has an unknown directive %\(directive); known: \(known)")
            }
        }
        self.pieces = pieces
    }

    /// Whether the pattern can be read back (it has no writing-only directive).
    func checkReadable(_ pattern: String) throws(Problem) {
        if pieces.contains(.zoneName) || pieces.contains(.dayOfYear) {
            throw Problem(
                message: "time format '\(pattern)': %Z and %j can be written but not read; read offsets with %z")
        }
    }

    /// The time `text` stands for, read with this pattern (UTC unless it has %z); nil if the text
    /// does not fit it.
    func parse(_ text: Substring) -> Int? {
        var scanner = TimeScanner(text)
        var civil = TimeText.Civil()
        var offset = 0
        var epoch: Int?
        for piece in pieces {
            switch piece {
            case .literal(let character):
                if character == " " {
                    while scanner.take(" ") {}
                } else if !scanner.take(character) {
                    return nil
                }
            case .year:
                guard let year = scanner.digits(exactly: 4) else { return nil }
                civil.year = year
            case .month:
                guard let month = scanner.digits(from: 1, to: 2) else { return nil }
                civil.month = month
            case .day, .dayPadded:
                _ = scanner.take(" ")
                guard let day = scanner.digits(from: 1, to: 2) else { return nil }
                civil.day = day
            case .hour:
                guard let hour = scanner.digits(from: 1, to: 2) else { return nil }
                civil.hour = hour
            case .minute:
                guard let minute = scanner.digits(from: 1, to: 2) else { return nil }
                civil.minute = minute
            case .second:
                guard let second = scanner.digits(from: 1, to: 2) else { return nil }
                civil.second = second
            case .fraction:
                guard let fraction = scanner.fraction() else { return nil }
                civil.millisecond = fraction
            case .offset:
                guard let zone = scanner.offset() else { return nil }
                offset = zone
            case .monthName, .monthAbbreviation:
                guard let month = scanner.name(TimeText.monthNames) else { return nil }
                civil.month = month + 1
            case .weekdayName, .weekdayAbbreviation:
                guard scanner.name(TimeText.weekdayNames) != nil else { return nil }
            case .epochSeconds:
                let negative = scanner.take("-")
                guard let seconds = scanner.digits(from: 1, to: 12) else { return nil }
                epoch = (negative ? -seconds : seconds) * 1000
            case .zoneName, .dayOfYear:
                return nil
            }
        }
        guard scanner.atEnd else { return nil }
        if let epoch { return epoch + civil.millisecond }
        guard civil.isValid() else { return nil }
        return TimeText.milliseconds(civil, offset: offset)
    }

    /// `milliseconds` written with this pattern, in a zone `offset` seconds east of UTC called
    /// `zoneName`.
    func format(_ milliseconds: Int, offset: Int, zoneName: String) -> String {
        let civil = TimeText.civil(milliseconds, offset: offset)
        let days = TimeText.days(year: civil.year, month: civil.month, day: civil.day)
        var text = ""
        for piece in pieces {
            switch piece {
            case .literal(let character): text.append(character)
            case .year: text += TimeText.pad(civil.year, 4)
            case .month: text += TimeText.pad(civil.month, 2)
            case .day: text += TimeText.pad(civil.day, 2)
            case .dayPadded: text += civil.day < 10 ? " \(civil.day)" : "\(civil.day)"
            case .hour: text += TimeText.pad(civil.hour, 2)
            case .minute: text += TimeText.pad(civil.minute, 2)
            case .second: text += TimeText.pad(civil.second, 2)
            case .fraction: text += TimeText.pad(civil.millisecond, 3)
            case .offset: text += TimeText.offsetText(offset, colon: false)
            case .zoneName: text += zoneName
            case .monthName: text += TimeText.monthNames[civil.month - 1]
            case .monthAbbreviation: text += String(TimeText.monthNames[civil.month - 1].prefix(3))
            case .weekdayName: text += TimeText.weekdayNames[Self.weekday(days)]
            case .weekdayAbbreviation: text += String(TimeText.weekdayNames[Self.weekday(days)].prefix(3))
            case .dayOfYear:
                text += TimeText.pad(days - TimeText.days(year: civil.year, month: 1, day: 1) + 1, 3)
            case .epochSeconds: text += String(TimeText.floorDivide(milliseconds, 1000).quotient)
            }
        }
        return text
    }

    /// 0 for Sunday: 1970-01-01 was a Thursday.
    static func weekday(_ days: Int) -> Int { TimeText.floorDivide(days + 4, 7).remainder }
}
