#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Objects read on demand, packed one after another into a buffer as their member tables and
/// bytes, to cross to another thread, which unpacks them into objects of its own. Handing the
/// objects themselves over costs more than their bytes: both threads then count references to
/// them, and each object's memory moves between the cores' caches there and back (to be freed or
/// filled again), where a buffer is written by one thread and read in order by the other.
extension JSONParser {
    /// Objects larger than this are not packed (copying them would cost more than sharing them).
    static var largestPacked: Int { 16_384 }

    /// Packs `value` into `buffer` at `end`, moving `end` past it, and returns where it starts,
    /// when it is an object kept as read and not too large; else packs nothing and returns nil (the
    /// value goes over as it is). `buffer` only grows: its bytes past `end` are room, not content,
    /// so a buffer filled again from `end` 0 writes over the last contents without clearing them.
    @_spi(Host) public static func pack(_ value: Value, into buffer: inout [UInt8], end: inout Int) -> Int? {
        // Read through an unretained reference: `value` holds the object throughout.
        value.unretainedRawObject?._withUnsafeGuaranteedRef { pack($0, into: &buffer, end: &end) }
    }

    private static func pack(_ raw: RawObject, into buffer: inout [UInt8], end: inout Int) -> Int? {
        guard raw.bytes.count <= largestPacked else { return nil }
        let header = PackedHeader(
            memberCount: UInt32(raw.members.count), byteCount: UInt32(raw.bytes.count),
            isCompact: raw.isCompact ? 1 : 0)
        // Members then bytes, as `unpack` reads them: one copy, as they lie so in the object.
        let region = raw.membersAndBytes
        let offset = end
        let regionStart = offset + MemoryLayout<PackedHeader>.stride
        end = regionStart + region.count
        if buffer.count < end {
            buffer.append(contentsOf: repeatElement(0, count: max(end - buffer.count, buffer.count)))
        }
        buffer.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: header, toByteOffset: offset, as: PackedHeader.self)
            if region.count > 0 {
                (bytes.baseAddress! + regionStart).copyMemory(from: region.baseAddress!, byteCount: region.count)
            }
        }
        return offset
    }

    /// The object `pack` put at `offset` of `buffer`, in `scratch`'s object when nothing else
    /// holds that, else in a new one left there.
    @_spi(Host) public static func unpack(
        at offset: Int, of buffer: UnsafeRawBufferPointer, reusing scratch: inout Scratch
    ) -> Value {
        let header = buffer.loadUnaligned(fromByteOffset: offset, as: PackedHeader.self)
        let memberCount = Int(header.memberCount)
        let byteCount = Int(header.byteCount)
        let memberBytes = memberCount * MemoryLayout<RawObject.Member>.stride
        let membersStart = buffer.baseAddress! + offset + MemoryLayout<PackedHeader>.stride
        return rawObject(
            memberCount: memberCount, byteCount: byteCount, isCompact: header.isCompact != 0, reusing: &scratch
        ) { members, bytes in
            if memberCount > 0 {
                UnsafeMutableRawPointer(members.baseAddress!).copyMemory(from: membersStart, byteCount: memberBytes)
            }
            if byteCount > 0 {
                UnsafeMutableRawPointer(bytes.baseAddress!).copyMemory(
                    from: membersStart + memberBytes, byteCount: byteCount)
            }
        }
    }
}

/// What comes before a packed object's members and bytes.
private struct PackedHeader {
    var memberCount: UInt32
    var byteCount: UInt32
    var isCompact: UInt32
}
