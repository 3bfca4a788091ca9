@_spi(Components) import Pipeline

/// How the `file` and `stdin` sources read CSV (`format: csv`): one record a line, its fields
/// split at `separator` outside double quotes, a quoted field's `""` read as one quote (RFC
/// 4180). With `header`, each file's first line names the fields and every later line becomes
/// an object of them; without it, a list. With `numbers`, a field written as a number (`42`,
/// `-1.5`, `2e3`) is read as one. A record per line, as Vector's csv codec reads newline-framed
/// input: a quoted field cannot hold a line break.
struct CSVRecords: Sendable {
    var header = true
    var numbers = false
    var separator: UInt8 = UInt8(ascii: ",")

    /// Why a line is not a record.
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    /// The fields of one line (without its newline; a carriage return before it is dropped).
    func fields(_ line: UnsafeBufferPointer<UInt8>) throws(Malformed) -> [String] {
        var end = line.count
        if end > 0 && line[end - 1] == 0x0D { end -= 1 }
        var fields: [String] = []
        var field: [UInt8] = []
        var index = 0
        var quoted = false
        var wasQuoted = false
        while index < end {
            let byte = line[index]
            if quoted {
                if byte == 0x22 {
                    if index + 1 < end && line[index + 1] == 0x22 {
                        field.append(0x22)
                        index += 2
                        continue
                    }
                    quoted = false
                } else {
                    field.append(byte)
                }
            } else if byte == separator {
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                wasQuoted = false
            } else if byte == 0x22 && field.isEmpty && !wasQuoted {
                quoted = true
                wasQuoted = true
            } else if byte == 0x22 {
                throw Malformed(
                    description:
                        "a quote inside an unquoted field (column \(index + 1)); quote the field and double the quote")
            } else if wasQuoted {
                throw Malformed(description: "text after a quoted field's closing quote (column \(index + 1))")
            } else {
                field.append(byte)
            }
            index += 1
        }
        if quoted {
            throw Malformed(description: "a quoted field is not closed by the end of the line (a record is one line)")
        }
        fields.append(String(decoding: field, as: UTF8.self))
        return fields
    }

    /// One record as a value: an object of `names` (the header's) or a list.
    func value(_ fields: [String], names: [String]?) throws(Malformed) -> Value {
        let values = fields.map { numbers ? Self.number($0) ?? .string($0) : .string($0) }
        guard let names else { return .array(values) }
        guard values.count == names.count else {
            throw Malformed(
                description: "\(values.count) field\(values.count == 1 ? "" : "s") where the header has \(names.count)")
        }
        var object = JSONObject()
        for (name, value) in zip(names, values) { object[name] = value }
        return .object(object)
    }

    /// The number a field is written as (JSON's syntax: no `+`, no leading zeros, no `.5`), or nil.
    static func number(_ text: String) -> Value? {
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first),
            case .success(let parsed) = Result(catching: { try JSONParser.parse(Array(text.utf8)) })
        else { return nil }
        switch parsed {
        case .int, .double: return parsed
        default: return nil
        }
    }
}

/// The parameters of CSV input, the same on every source that reads it (`file`, `stdin`).
enum CSVParameters {
    static let header = Parameter<Bool>(
        "header", default: true,
        doc: "With format: csv: the first line names the fields, each record an object of them (false: a list).")
    static let numbers = Parameter<Bool>(
        "numbers", default: false, doc: "With format: csv: a field written as a number (42, -1.5, 2e3) is read as one.")
    static let separator = Parameter<String>(
        "separator", default: ",", doc: "With format: csv: the one character between fields (, ; | or a tab).",
        example: ";")

    /// The reading the parameters ask for; `header` when the component has no such parameter.
    static func records(_ parameters: ParameterValues, header: Bool? = nil) -> CSVRecords {
        CSVRecords(
            header: header ?? parameters[Self.header], numbers: parameters[numbers],
            separator: parameters[separator].utf8.first ?? UInt8(ascii: ","))
    }

    /// A separator that is not one character a record can be split at is an error at its place.
    static func check(_ values: ParameterValues, _ validation: ComponentValidation) {
        let written = values[separator]
        let bytes = Array(written.utf8)
        if bytes.count != 1 || bytes[0] == 0x22 || bytes[0] == 0x0A || bytes[0] == 0x0D {
            validation.error(
                "separator must be one character other than a quote or a line break, such as ';'; got '\(written)'",
                at: separator, in: values)
        }
    }
}
