import CNATS
import Foundation

/// JetStream streams as the `nats` source and sink find them: checked, or created when the file
/// says `create: true`. One implementation for both components.
enum NATSStreams {
    /// Checks that `stream` exists; when it does not, creates it (file storage, storing
    /// `subjects`, `replicas` copies) if `create` is set, and otherwise fails naming it.
    static func ensure(
        _ stream: String, subjects: String, create: Bool, replicas: Int, js: OpaquePointer, endpoint: String
    ) throws {
        var code = jsErrCode(rawValue: 0)
        var info: UnsafeMutablePointer<jsStreamInfo>?
        let status = js_GetStreamInfo(&info, js, stream, nil, &code)
        if status == NATS_OK {
            jsStreamInfo_Destroy(info)
            return
        }
        guard NATSError.isNotFound(status, code) else {
            throw NATSError(status, code: code, doing: "cannot read stream '\(stream)' on \(endpoint)")
        }
        guard create else {
            throw NATSSetupError(
                "stream '\(stream)' does not exist on \(endpoint); create it, or write create: true to create it")
        }
        try add(stream, subjects: subjects, replicas: replicas, js: js)
    }

    /// The streams that store `subject`, as JetStream lists them.
    static func streams(storing subject: String, js: OpaquePointer) throws -> [String] {
        var options = jsOptions()
        jsOptions_Init(&options)
        var code = jsErrCode(rawValue: 0)
        var list: UnsafeMutablePointer<jsStreamNamesList>?
        let status = subject.withCString { filter in
            options.Stream.Info.SubjectsFilter = filter
            return js_StreamNames(&list, js, &options, &code)
        }
        defer { jsStreamNamesList_Destroy(list) }
        if NATSError.isNotFound(status, code) { return [] }
        guard status == NATS_OK, let list else {
            throw NATSError(status, code: code, doing: "cannot list the streams storing '\(subject)'")
        }
        return (0..<Int(list.pointee.Count)).compactMap { list.pointee.List[$0].map { String(cString: $0) } }
    }

    /// Makes sure a stream stores the dead letters a source publishes to `subject`: when none
    /// does, `create` makes `STREAM_DEAD` for them, and otherwise the user is told at start (a
    /// dead letter no stream stores goes back and comes again).
    static func ensureDeadLetters(
        _ subject: String, of stream: String, create: Bool, replicas: Int, js: OpaquePointer,
        report: (String) -> Void
    ) throws {
        guard try streams(storing: subject, js: js).isEmpty else { return }
        guard create else {
            return report(
                "no stream stores the dead letters on '\(subject)': create one (or write create: true), or a "
                    + "failed message goes back and comes again")
        }
        try add("\(stream)_DEAD", subjects: subject, replicas: replicas, js: js)
        report("created stream '\(stream)_DEAD' for the dead letters on '\(subject)'")
    }

    private static func add(_ stream: String, subjects: String, replicas: Int, js: OpaquePointer) throws {
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        var code = jsErrCode(rawValue: 0)
        let subject = strdup(subjects)
        defer { free(subject) }
        var list: [UnsafePointer<CChar>?] = [UnsafePointer(subject)]
        let status = stream.withCString { name in
            list.withUnsafeMutableBufferPointer { buffer in
                config.Name = name
                config.Subjects = buffer.baseAddress
                config.SubjectsLen = 1
                config.Storage = js_FileStorage
                config.Replicas = Int64(replicas)
                return js_AddStream(nil, js, &config, nil, &code)
            }
        }
        guard status == NATS_OK else {
            // The server's own words name no stream; the streams that store those subjects are asked for.
            if code == JSStreamSubjectOverlapErr, let others = try? streams(storing: subjects, js: js), !others.isEmpty
            {
                let named = others.map { "'\($0)'" }.joined(separator: ", ")
                throw NATSSetupError(
                    "cannot create stream '\(stream)': its subjects '\(subjects)' overlap those stream"
                        + "\(others.count == 1 ? "" : "s") \(named) store\(others.count == 1 ? "s" : "") (a subject is "
                        + "stored by one stream): read that stream (stream: \(others[0])), or give this one other subjects"
                )
            }
            throw NATSError(status, code: code, doing: "cannot create stream '\(stream)'")
        }
    }

    /// Whether the subject `subject` is one that `filter` (with NATS's wildcards: `*` one token,
    /// `>` the rest, at least one) takes.
    static func subject(_ subject: String, matches filter: String) -> Bool {
        let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        let wanted = filter.split(separator: ".", omittingEmptySubsequences: false)
        for (index, token) in wanted.enumerated() {
            if token == ">" { return tokens.count > index }
            guard index < tokens.count, token == "*" || token == tokens[index] else { return false }
        }
        return tokens.count == wanted.count
    }

    /// The subjects a stream created for a templated subject stores: each token that holds a
    /// template is `*` (`invoices.{{ .customer }}` → `invoices.*`).
    static func subjects(storing template: String) -> String {
        var tokens: [String] = []
        var token = ""
        var templated = false
        var depth = 0
        var characters = Array(template)
        characters.append(".")
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            if character == "{" && next == "{" {
                depth += 1
                templated = true
                index += 2
                continue
            }
            if character == "}" && next == "}" && depth > 0 {
                depth -= 1
                index += 2
                continue
            }
            if character == "." && depth == 0 {
                tokens.append(templated ? "*" : token)
                token = ""
                templated = false
            } else if depth == 0 {
                token.append(character)
            }
            index += 1
        }
        return tokens.joined(separator: ".")
    }
}
