/// The keys of an object expression whose values are members of the element
/// (`{id: .id, title: .name}`) or computed, prepared once for `RawObject.projecting`.
final class ProjectionShape: @unchecked Sendable {  // immutable after init
    /// The number of keys.
    let count: Int
    /// The member of the element each key takes its value from, as UTF-8 bytes (nil for a
    /// computed value), then each key as JSON text, quotes included; all in `text`. Kept as
    /// pointers rather than arrays: reading an array in the object would retain its buffer, and
    /// the workers of `parallel:` share one shape.
    private let sourceRanges: UnsafeMutableBufferPointer<Range<Int>?>
    private let keyRanges: UnsafeMutableBufferPointer<Range<Int>>
    private let text: UnsafeMutableBufferPointer<UInt8>

    /// Nil when a key needs an escape in JSON (a raw object's keys have none).
    init?(keys: [String], sources: [String?]) {
        var bytes: [UInt8] = []
        var sourceRanges: [Range<Int>?] = []
        var keyRanges: [Range<Int>] = []
        for source in sources {
            guard let source else {
                sourceRanges.append(nil)
                continue
            }
            let start = bytes.count
            bytes.append(contentsOf: source.utf8)
            sourceRanges.append(start..<bytes.count)
        }
        for key in keys {
            let start = bytes.count
            JSONSerializer.writeString(key, to: &bytes)
            guard bytes.count - start == key.utf8.count + 2 else { return nil }
            keyRanges.append(start..<bytes.count)
        }
        count = keys.count
        self.sourceRanges = .allocate(capacity: sourceRanges.count)
        _ = self.sourceRanges.initialize(from: sourceRanges)
        self.keyRanges = .allocate(capacity: keyRanges.count)
        _ = self.keyRanges.initialize(from: keyRanges)
        text = .allocate(capacity: max(1, bytes.count))
        _ = text.initialize(from: bytes)
    }

    deinit {
        sourceRanges.deallocate()
        keyRanges.deallocate()
        text.deallocate()
    }

    /// The UTF-8 bytes of the member key `index` takes its value from; nil for a computed value.
    @inline(__always)
    func source(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
        sourceRanges[index].map { UnsafeBufferPointer(rebasing: text[$0]) }
    }

    /// Key `index` as JSON text, quotes included.
    @inline(__always)
    func quotedKey(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: text[keyRanges[index]])
    }
}
