@_spi(Components) import Pipeline

/// Which partition a key belongs to, the same in every run, on every machine and in every
/// version: FNV-1a (32 bits) of the key's bytes, modulo the number of partitions.
///
/// A text key hashes its UTF-8 bytes; any other key its JSON text (`42`, `true`, `["a",1]`).
/// NATS's subject mapping `partition(n, ...)` hashes the chosen subject tokens with the same
/// function, so a text key sent as one subject token lands in the partition it names.
public enum PartitionHash {
    /// The partition of `key` among `count` (at least 1).
    public static func partition(of key: Value, count: Int) -> Int {
        if case .string(var text) = key { return text.withUTF8 { partition(ofText: $0, count: count) } }
        var bytes: [UInt8] = []
        JSONSerializer.write(key, to: &bytes)
        return partition(ofHash: bytes.withUnsafeBufferPointer { fnv1a($0) }, count: count)
    }

    /// The partition of a text key given as its UTF-8 bytes (`partition(of: .string(text))`).
    public static func partition(ofText bytes: UnsafeBufferPointer<UInt8>, count: Int) -> Int {
        partition(ofHash: fnv1a(bytes), count: count)
    }

    /// `hash` modulo `count`: for a power of two, the same number without a division (which was
    /// a tenth of routing an element).
    @inline(__always)
    static func partition(ofHash hash: UInt32, count: Int) -> Int {
        if count & (count - 1) == 0 { return Int(hash & UInt32(truncatingIfNeeded: count - 1)) }
        return Int(hash % UInt32(count))
    }

    /// FNV-1a, 32 bits: offset basis 2166136261, prime 16777619.
    public static func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in bytes {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }
}
