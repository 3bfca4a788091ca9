#if canImport(Glibc)
    import Glibc
#endif

/// The names and inode numbers of the entries of a folder (`.` and `..` included), or none if
/// it cannot be read.
func directoryEntries(of folder: String) -> [(name: String, inode: UInt64)] {
    guard let directory = opendir(folder) else { return [] }
    defer { closedir(directory) }
    var entries: [(name: String, inode: UInt64)] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) {
            String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
        }
        entries.append((name, UInt64(entry.pointee.d_ino)))
    }
    return entries
}
