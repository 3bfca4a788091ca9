import Foundation
@_spi(Host) @_spi(Components) import Pipeline

/// `--env-file PATH`: `NAME=VALUE` lines, as Docker, Vector and Redpanda Connect read them: blank
/// lines and `#` comments are skipped, `export ` before a name is allowed, and a value in single or
/// double quotes has them removed (`\n`, `\"` and `\\` are read in double quotes).
enum EnvironmentFile {
    /// A line that is not `NAME=VALUE`, or a file that cannot be read, located.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// The variables of the file at `path`, in order.
    static func read(_ path: String) throws(Problem) -> [(String, String)] {
        guard let text = LocalFiles.readText(path) else {
            throw Problem(description: "error: cannot read the environment file '\(path)'")
        }
        var variables: [(String, String)] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = String(line.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
            guard let equals = line.firstIndex(of: "="),
                case let name = line[..<equals].trimmingCharacters(in: .whitespaces),
                let first = name.unicodeScalars.first,
                first == "_" || CharacterSet.letters.contains(first),
                name.unicodeScalars.allSatisfy({ $0 == "_" || CharacterSet.alphanumerics.contains($0) })
            else {
                throw Problem(
                    description: "\(path):\(index + 1):1: error: expected NAME=VALUE, got '\(line.prefix(60))'")
            }
            variables.append((name, unquoted(line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces))))
        }
        return variables
    }

    private static func unquoted(_ value: String) -> String {
        guard value.count >= 2, let quote = value.first, quote == "\"" || quote == "'", value.last == quote else {
            return value
        }
        let inner = String(value.dropFirst().dropLast())
        guard quote == "\"" else { return inner }
        var result = ""
        var escaping = false
        for character in inner {
            if escaping {
                result.append(character == "n" ? "\n" : character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}
