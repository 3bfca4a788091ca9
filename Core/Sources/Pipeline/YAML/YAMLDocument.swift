/// YAML as components read it: a whole document (a fixture, a timeline file) to a value, and a
/// plain scalar typed as YAML types it. The same reader as pipeline files', without `${VAR}`.
@_spi(Components) public enum YAMLDocument {
    /// The value of the YAML document `text` (null when it is empty); `file` names it in errors.
    public static func value(of text: String, file: String) throws(YAMLDocumentError) -> Value {
        do {
            return try YAMLLoader(file: file, environment: [:]).load(text)?.toValue() ?? .null
        } catch {
            throw YAMLDocumentError(description: error.diagnostics.first?.description ?? "\(error)")
        }
    }

    /// `text` typed by YAML 1.2's core schema, as an unquoted scalar is (`12` a number, `true` a
    /// Boolean, `~` null, anything else text).
    public static func plainScalar(_ text: String) -> Value {
        YAMLNode.resolvePlain(text)
    }
}

/// Why a YAML document could not be read: its first problem, located (`file:line:col: error: ...`).
@_spi(Components) public struct YAMLDocumentError: Error, CustomStringConvertible {
    /// The problem, with where it is.
    public let description: String
}
