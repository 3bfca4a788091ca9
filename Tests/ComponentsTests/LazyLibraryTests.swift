import CLazyLoading
import Components
import Foundation
import RivuletTestSupport
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

    /// A program that loads libnats through the loader, keeps two threads in OpenSSL and exits:
    /// OpenSSL's own cleanup at exit would free the locks those threads take (a crash, 139, in
    /// nearly every run of it). Compiled with the toolchain's clang from the loader's own source.
    func testALibraryThatBringsOpenSSLLeavesItWholeWhenTheProcessExits() throws {
        let folder = NSTemporaryDirectory() + "rivulet-lazy-exit-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let loading = Repository.root.appendingPathComponent("Sources/CLazyLoading").path
        try """
        #include <dlfcn.h>
        #include <pthread.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        #include "lazy_library.h"

        static const char *const files[] = {"libnats.so.3.4", "libnats.so", NULL};
        static const char *const names[] = {NULL};
        static void *pointers[1];
        static struct rivulet_lazy_library nats = {"libnats3.4", files, names, pointers, 0, 0, NULL, ""};
        typedef int (*random_bytes)(unsigned char *, int);
        static random_bytes fill;
        static volatile int running;

        static void *spin(void *unused) {
            unsigned char bytes[16];
            running = 1;
            for (;;) fill(bytes, sizeof bytes);
            return unused;
        }

        int main(void) {
            const char *error = rivulet_lazy_load_error(&nats);
            if (error != NULL) { fprintf(stderr, "%s\\n", error); return 3; }
            fill = (random_bytes)dlsym(nats.handle, "RAND_bytes");
            if (fill == NULL) { fprintf(stderr, "no RAND_bytes\\n"); return 4; }
            pthread_t threads[2];
            for (int index = 0; index < 2; index++) pthread_create(&threads[index], NULL, spin, NULL);
            while (!running) {}
            usleep(2000);
            exit(0);
        }
        """.write(toFile: folder + "/exit.c", atomically: true, encoding: .utf8)
        let compile = try ChildProcess(
            executable: "clang",
            arguments: [
                "-O1", "-I", loading + "/include", "-o", folder + "/exit", folder + "/exit.c",
                loading + "/lazy_library.c", "-ldl", "-lpthread",
            ]
        ).communicate(timeout: 120)
        XCTAssertEqual(compile.termination, .exited(0), String(decoding: compile.standardError, as: UTF8.self))
        for run in 1...8 {
            let exited = try ChildProcess(executable: folder + "/exit", arguments: []).communicate(timeout: 30)
            XCTAssertEqual(
                exited.termination, .exited(0),
                "run \(run): \(String(decoding: exited.standardError, as: UTF8.self))")
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
