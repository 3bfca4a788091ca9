#if canImport(Glibc)
    import Glibc
#endif

/// The malloc heap of a thread that does a stream's work (a `parallel:` helper, a partition's
/// thread). glibc gives each such thread a heap of its own and grows it by what an allocation
/// lacks: a page, and a system call (`mprotect`), at a time. A W2 helper made 530-700 of those
/// calls and W3's two partition threads 3,500, each also sending the other core a TLB flush.
enum ThreadHeap {
    /// Room for what a `parallel:` helper decodes in a batch (a W2 helper's heap reaches 2 MB).
    static let helperBytes = 4 << 20
    /// Room for a partition's state (a W3 partition of 5,000 keys reaches 8.5 MB).
    static let partitionBytes = 16 << 20
    /// Below glibc's smallest mmap threshold (128 KiB), so a block comes from the heap.
    private static let blockBytes = 120 << 10

    /// Grows the calling thread's heap to `bytes` at once, a system call each 120 KiB, by
    /// allocating blocks together and freeing them: the heap keeps its mapping (glibc gives the
    /// pages back without unmapping them), so it then grows that far without a system call and
    /// takes no memory until used.
    static func grow(to bytes: Int) {
        #if canImport(Glibc)
            let blocks = (0..<((bytes + blockBytes - 1) / blockBytes)).map { _ in malloc(blockBytes) }
            for block in blocks { free(block) }
        #endif
    }
}
