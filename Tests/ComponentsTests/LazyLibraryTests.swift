import CLazyLoading
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// A library loaded on the first call of one of its functions (CLazyLoading, as libnats and libpq
/// are): found under the first file name that loads, refused with a message that says what to
/// install, or refused when a function is missing.
final class LazyLibraryTests: XCTestCase {
    /// Runs `body` with a library of `files` (tried in turn) and the functions `names`.
    private func withLibrary<R>(
        files: [String], names: [String], _ body: (UnsafeMutablePointer<rivulet_lazy_library>) -> R
    ) -> R {
        let fileNames = files.map { UnsafePointer(strdup($0)) } + [nil]
        let functionNames = names.map { UnsafePointer(strdup($0)) }
        let pointers = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: max(1, names.count))
        let package = strdup("libexample1 (an example)")
        defer {
            for name in fileNames + functionNames { free(UnsafeMutablePointer(mutating: name)) }
            free(package)
            pointers.deallocate()
        }
        return fileNames.withUnsafeBufferPointer { files in
            functionNames.withUnsafeBufferPointer { names in
                var library = rivulet_lazy_library()
                library.package = UnsafePointer(package)
                library.files = files.baseAddress
                library.names = names.baseAddress
                library.pointers = pointers
                library.count = Int32(names.count)
                return body(&library)
            }
        }
    }

    func testTheFirstFileThatLoadsGivesTheFunctions() {
        withLibrary(files: ["librivulet-missing.so.9", "libz.so.1"], names: ["zlibVersion"]) { library in
            XCTAssertNil(rivulet_lazy_load_error(library))
            let version = unsafeBitCast(
                rivulet_lazy_function(library, 0), to: (@convention(c) () -> UnsafePointer<CChar>).self)
            XCTAssertTrue(String(cString: version()).hasPrefix("1."))
            XCTAssertEqual(library.pointee.state, 1)
        }
    }

    func testALibraryThatCannotBeLoadedSaysWhatToInstall() {
        withLibrary(files: ["librivulet-missing.so.9"], names: ["zlibVersion"]) { library in
            let error = rivulet_lazy_load_error(library).map { String(cString: $0) }
            XCTAssertEqual(
                error,
                "libexample1 (an example) cannot be loaded: librivulet-missing.so.9: cannot open shared object file: "
                    + "No such file or directory; install that package")
            // Asked again, the same answer (it is not tried again).
            XCTAssertEqual(rivulet_lazy_load_error(library).map { String(cString: $0) }, error)
        }
    }

    func testALibraryWithoutAFunctionIsRefused() {
        withLibrary(files: ["libz.so.1"], names: ["zlibVersion", "rivulet_no_such_function"]) { library in
            XCTAssertEqual(
                rivulet_lazy_load_error(library).map { String(cString: $0) },
                "libexample1 (an example) has no function rivulet_no_such_function: a version older than the one "
                    + "built against")
        }
    }
}
