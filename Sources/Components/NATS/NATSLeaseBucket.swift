import CNATS
import Foundation

/// A `LeaseBucket` in JetStream's key-value store: the bucket is created on first use (file
/// storage, one revision kept per key, entries removed `timeToLive` after their last write), and
/// creates and updates are compare-and-set on the key's revision, done by the server.
final class NATSLeaseBucket: LeaseBucket {
    private let store: OpaquePointer
    let name: String

    /// Binds to the bucket `name`, creating it when it does not exist (`timeToLive` zero: its
    /// entries never expire) on `replicas` servers of a cluster.
    init(name: String, timeToLive: Duration, replicas: Int = 1, js: OpaquePointer) throws {
        self.name = name
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

    func entries() throws -> [String: LeaseBucketEntry] {
        var list = kvKeysList()
        let status = kvStore_Keys(&list, store, nil)
        defer { kvKeysList_Destroy(&list) }
        if status == NATS_NOT_FOUND { return [:] }
        guard status == NATS_OK else { throw NATSError(status, doing: "cannot list the keys of '\(name)'") }
        var result: [String: LeaseBucketEntry] = [:]
        for index in 0..<Int(list.Count) {
            guard let pointer = list.Keys[index] else { continue }
            let key = String(cString: pointer)
            var entry: OpaquePointer?
            let read = kvStore_Get(&entry, store, key)
            defer { if let entry { kvEntry_Destroy(entry) } }
            // Gone between the listing and the read (expired, deleted): not an entry.
            if read == NATS_NOT_FOUND { continue }
            guard read == NATS_OK, let entry else { throw NATSError(read, doing: "cannot read '\(key)' of '\(name)'") }
            let value = kvEntry_ValueString(entry).map { String(cString: $0) } ?? ""
            result[key] = LeaseBucketEntry(value: value, revision: kvEntry_Revision(entry))
        }
        return result
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
        return LeaseBucketEntry(value: value, revision: kvEntry_Revision(entry))
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
        let last = nats_GetLastError(nil).map { String(cString: $0) } ?? ""
        if last.localizedCaseInsensitiveContains("wrong last sequence") || status == NATS_NOT_FOUND { return nil }
        throw NATSError(status, doing: "cannot write '\(key)' of '\(name)'")
    }
}
