import Synchronization

/// The secret values of this process — environment variables a pipeline reads whose names say
/// they are secret (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`, or listed
/// under `secrets:`), and the keys API sources send — and their masking wherever rivulet writes
/// text: errors, logs, traces, recordings, sinks. A value is masked as written and in the forms
/// it takes on the way: percent-encoded, form-encoded, base64 and JSON-escaped.
@_spi(Components) public final class Secrets: Sendable {
    /// The one set of a process.
    public static let shared = Secrets()
    /// What a secret is replaced by.
    public static let placeholder = "REDACTED"
    /// Words that make an environment variable's value a secret, in its name (any case).
    @_spi(Host) public static let secretNameWords = ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"]

    private let forms = Mutex<[String]>([])
    private let known = Atomic<Bool>(false)

    /// Whether there is any secret to mask (checked before the work of masking).
    public var isEmpty: Bool { !known.load(ordering: .relaxed) }

    /// Whether the variable `name` holds a secret by its name.
    @_spi(Host) public static func isSecretName(_ name: String) -> Bool {
        let upper = name.uppercased()
        return secretNameWords.contains { upper.contains($0) }
    }

    /// Remembers `value` (too short a value is ignored: masking it would mangle ordinary text).
    public func add(_ value: String) {
        guard value.count >= 4 else { return }
        let base64 = Self.base64(Array(value.utf8))
        var encodings = [
            value, Self.percentEncoded(value, keeping: { _ in false }),
            Self.percentEncoded(value, keeping: { "-._~!$'()*,;=:@/?".utf8.contains($0) }),
            Self.percentEncoded(value, keeping: { "-._~".utf8.contains($0) }).replacing("%20", with: "+"),
            base64, String(base64.prefix { $0 != "=" }),
        ]
        var escaped: [UInt8] = []
        JSONSerializer.write(.string(value), to: &escaped)
        encodings.append(String(decoding: escaped.dropFirst().dropLast(), as: UTF8.self))
        forms.withLock { forms in
            for form in encodings where !forms.contains(form) { forms.append(form) }
            // Longest first, so a form that contains another is masked whole.
            forms.sort { $0.count > $1.count }
        }
        known.store(true, ordering: .relaxed)
    }

    /// `text` with every secret form replaced by the placeholder.
    public func redact(_ text: String) -> String {
        guard !isEmpty else { return text }
        var result = text
        for form in forms.withLock({ $0 }) where result.contains(form) {
            result = result.replacing(form, with: Self.placeholder)
        }
        return result
    }

    /// `bytes` with every secret form replaced, or nil when none occurs (the common case).
    public func redact(bytes: some Collection<UInt8>) -> [UInt8]? {
        guard !isEmpty else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        let redacted = redact(text)
        return redacted == text ? nil : Array(redacted.utf8)
    }

    /// `text` with every byte but ASCII letters, digits and those `keeping` allows as `%XX`.
    static func percentEncoded(_ text: String, keeping: (UInt8) -> Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            let plain =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            if plain || keeping(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Standard base64, padded.
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                output.append(
                    position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Remembers the credentials of every URL in `text` (`nats://alice:pw@host`, `nats://TOKEN@host`):
    /// the whole user part and the password alone, so neither is printed, in errors, a graph or
    /// a log, however short the password.
    public func addURLCredentials(in text: String) {
        for credentials in Self.urlCredentials(in: text) {
            add(credentials)
            if let colon = credentials.firstIndex(of: ":") {
                add(String(credentials[credentials.index(after: colon)...]))
            }
        }
    }

    /// The user parts (`alice:pw`, `TOKEN`) of the URLs in `text`: what stands between `://` and
    /// the next `@` before any `/`, white space, quote or comma; of a `postgres(ql)://` URL only
    /// the password.
    @_spi(Host) public static func urlCredentials(in text: String) -> [String] {
        var found: [String] = []
        var rest = text[...]
        while let scheme = rest.firstRange(of: "://") {
            let after = rest[scheme.upperBound...]
            let end = after.firstIndex { " \t\n\r/\"',}]?#".contains($0) } ?? after.endIndex
            let authority = after[..<end]
            if let at = authority.lastIndex(of: "@"), at > authority.startIndex {
                let user = authority[..<at]
                // A database URL's user is a role name (`postgres`), not a token: only its
                // password is secret, and masking the name would mask every mention of it.
                let schemeName = rest[..<scheme.lowerBound].reversed().prefix { $0.isLetter }
                if String(schemeName.reversed()).lowercased().hasPrefix("postgres") {
                    if let colon = user.firstIndex(of: ":") { found.append(String(user[user.index(after: colon)...])) }
                } else {
                    found.append(String(user))
                }
            }
            rest = after[end...]
        }
        return found
    }

    /// The names of the environment variables `text` reads with `${NAME}` or `${NAME:-default}`.
    @_spi(Host) public static func variables(in text: String) -> Set<String> {
        var names: Set<String> = []
        var rest = text[...]
        while let start = rest.firstRange(of: "${") {
            let after = rest[start.upperBound...]
            guard let end = after.firstIndex(where: { $0 == "}" || $0 == ":" }) else { break }
            names.insert(String(after[..<end]))
            rest = after[end...]
        }
        return names
    }
}

/// The passwords written as libpq settings (a `postgres` component's connection): kept apart
/// from `Secrets` so that the plugins' binary interface, which holds its members, stays as it is.
enum ConnectionPasswords {
    /// Remembers in `secrets` the passwords in `text`: `password=pw` in a `key=value` connection
    /// string (quoted or not) or in a URL's query.
    static func add(in text: String, to secrets: Secrets) {
        var rest = text[...]
        while let setting = rest.firstRange(of: "password=") {
            var value = rest[setting.upperBound...]
            if value.first == "'" {
                value = value.dropFirst()
                secrets.add(String(value.prefix { $0 != "'" }))
            } else {
                secrets.add(String(value.prefix { !" \t\n\r&#\"',}]".contains($0) }))
            }
            rest = value
        }
    }
}
