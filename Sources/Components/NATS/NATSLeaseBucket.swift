import CNATS
import Foundation

/// A `LeaseBucket` in JetStream's key-value store: the bucket is created on first use (file
/// storage, one revision kept per key, entries removed `timeToLive` after their last write), and
/// creates and updates are compare-and-set on the key's revision, done by the server.
final class NATSLeaseBucket: LeaseBucket {
    private let store: OpaquePointer
    private let js: OpaquePointer
    let name: String

    /// Binds to the bucket `name`, creating it when it does not exist (`timeToLive` zero: its
    /// entries never expire) on `replicas` servers of a cluster.
    init(name: String, timeToLive: Duration, replicas: Int = 1, js: OpaquePointer) throws {
        self.name = name
        self.js = js
        var bound: OpaquePointer?
        var status = js_KeyValue(&bound, js, name)
        if status == NATS_NOT_FOUND {
            var config = kvConfig()
            kvConfig_Init(&config)
            let (seconds, attoseconds) = timeToLive.components
            config.TTL = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
            config.History = 1
            config.Replicas = Int32(max(replicas, 1))
            config.StorageType = js_FileStorage
            status = name.withCString { bucket in
                config.Bucket = bucket
                return js_CreateKeyValue(&bound, js, &config)
            }
        }
        guard status == NATS_OK, let bound else {
            throw NATSError(status, doing: "cannot open the key-value bucket '\(name)'")
        }
        store = bound
    }

    deinit { kvStore_Destroy(store) }

    /// The keys come from one request to the bucket's stream (its subjects), not from
    /// `kvStore_Keys`, whose consumer a cluster that just lost a node failed to make for a minute.
    func entries() throws -> [String: LeaseBucketEntry] {
        var result: [String: LeaseBucketEntry] = [:]
        for key in try keys() {
            if let entry = try entry(key) { result[key] = entry }
        }
        return result
    }

    /// Every key with an entry or a deletion marker, from the stream's list of subjects.
    private func keys() throws -> [String] {
        let prefix = "$KV.\(name)."
        var options = jsOptions()
        jsOptions_Init(&options)
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = "\(prefix)>".withCString { filter in
            options.Stream.Info.SubjectsFilter = filter
            return js_GetStreamInfo(&info, js, "KV_\(name)", &options, &code)
        }
        defer { jsStreamInfo_Destroy(info) }
        if NATSError.isNotFound(status, code) { return [] }
        guard status == NATS_OK, let info else {
            throw NATSError(status, code: code, doing: "cannot list the keys of '\(name)'")
        }
        guard let subjects = info.pointee.State.Subjects else { return [] }
        return (0..<Int(subjects.pointee.Count)).compactMap { index in
            guard let subject = subjects.pointee.List[index].Subject else { return nil }
            let text = String(cString: subject)
            return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : nil
        }
    }

    /// The entry of `key`, or nil when there is none.
    func entry(_ key: String) throws -> LeaseBucketEntry? {
        var entry: OpaquePointer?
        let read = kvStore_Get(&entry, store, key)
        defer { if let entry { kvEntry_Destroy(entry) } }
        if read == NATS_NOT_FOUND { return nil }
        guard read == NATS_OK, let entry else { throw NATSError(read, doing: "cannot read '\(key)' of '\(name)'") }
        // A deleted key reads as an entry without a value.
        if kvEntry_Operation(entry) != kvOp_Put { return nil }
        let value = kvEntry_ValueString(entry).map { String(cString: $0) } ?? ""
        return LeaseBucketEntry(value: value, revision: kvEntry_Revision(entry), created: kvEntry_Created(entry))
    }

    func put(_ key: String, _ value: String) throws -> UInt64 {
        var revision: UInt64 = 0
        let status = kvStore_PutString(&revision, store, key, value)
        guard status == NATS_OK else { throw NATSError(status, doing: "cannot write '\(key)' of '\(name)'") }
        return revision
    }

    func create(_ key: String, _ value: String) throws -> UInt64? {
        var revision: UInt64 = 0
        let status = kvStore_CreateString(&revision, store, key, value)
        return try answer(status, revision, writing: key)
    }

    func update(_ key: String, _ value: String, expected: UInt64) throws -> UInt64? {
        var revision: UInt64 = 0
        let status = kvStore_UpdateString(&revision, store, key, value, expected)
        return try answer(status, revision, writing: key)
    }

    func delete(_ key: String) throws {
        let status = kvStore_Delete(store, key)
        guard status == NATS_OK else { throw NATSError(status, doing: "cannot delete '\(key)' of '\(name)'") }
    }

    /// A compare-and-set the server refused because the key is not where the writer saw it: nil;
    /// any other failure (the server away, the bucket gone) is an error.
    private func answer(_ status: natsStatus, _ revision: UInt64, writing key: String) throws -> UInt64? {
        if status == NATS_OK { return revision }
        // The thread's last error text can be an earlier call's: a timeout is never a refusal.
        let last = nats_GetLastError(nil).map { String(cString: $0) } ?? ""
        let refused = last.localizedCaseInsensitiveContains("wrong last sequence") || status == NATS_NOT_FOUND
        if refused && status != NATS_TIMEOUT && status != NATS_NO_RESPONDERS { return nil }
        throw NATSError(status, doing: "cannot write '\(key)' of '\(name)'")
    }
}
