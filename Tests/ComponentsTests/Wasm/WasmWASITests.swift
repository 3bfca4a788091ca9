import Foundation
import RivuletTestSupport
import XCTest

/// What a `wasm` module reaches through WASI: only what the pipeline file grants (environment
/// variables by name, directories to read), never a write.
final class WasmWASITests: LeakCheckingTestCase {
    /// WASI preview 1 as a module without a C library declares it.
    private static let wasi = """
        #define WASI(name) __attribute__((import_module("wasi_snapshot_preview1"), import_name(#name)))
        WASI(environ_sizes_get) int environ_sizes_get(size_t *count, size_t *size);
        WASI(environ_get) int environ_get(char **environ, char *buffer);
        WASI(path_open) int path_open(int fd, int dirflags, const char *path, size_t path_length, int oflags,
            unsigned long long base, unsigned long long inheriting, int fdflags, int *opened);
        typedef struct { char *buffer; size_t length; } iovec;
        WASI(fd_read) int fd_read(int fd, iovec *vectors, size_t count, size_t *read);
        WASI(fd_write) int fd_write(int fd, iovec *vectors, size_t count, size_t *written);
        static char text[256];
        static void emit_text(size_t n) {
            char out[260]; size_t m = 0; out[m++] = '"';
            for (size_t i = 0; i < n && text[i] != '\\n' && text[i] != 0; i++) out[m++] = text[i];
            out[m++] = '"'; rivulet_emit(out, m);
        }
        static void emit_errno(int errno) {
            char out[16] = "{\\"errno\\":"; size_t m = 9;
            if (errno >= 10) out[m++] = '0' + errno / 10;
            out[m++] = '0' + errno % 10; out[m++] = '}'; rivulet_emit(out, m);
        }
        """

    private func run(_ body: String, wasi grants: String, in folder: String) throws -> [String] {
        let module = try WasmTestModules.plugin(body, extra: Self.wasi)
        let pipeline = "\(folder)/p.yaml"
        try """
        streams:
          main:
            source: { events: [{ at: 0ms, next: 1 }, { at: 10ms, complete: true }] }
            ops:
              - wasm: { module: \(module), wasi: \(grants), onError: errors }
        sinks:
          - { stream: main, record: out }
          - { stream: main.errors, record: errors }
        """.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let harness = try PipelineHarness().run(file: pipeline)
        return harness.events() + harness.events("errors").filter { !$0.hasSuffix(": completed") }
    }

    private func folder() throws -> String {
        let path = NSTemporaryDirectory() + "rivulet-wasi-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path + "/data", withIntermediateDirectories: true)
        try "hello from data\n".write(toFile: path + "/data/greeting.txt", atomically: true, encoding: .utf8)
        return path
    }

    private let readEnvironment = """
        size_t count = 0, size = 0; char *pointers[8];
        environ_sizes_get(&count, &size);
        if (count == 0) { rivulet_emit("\\"none\\"", 6); return 0; }
        environ_get(pointers, text);
        emit_text(size - 1);
        return 0;
        """

    func testAnEnvironmentVariableIsSeenOnlyWhenGranted() throws {
        setenv("RIVULET_WASI_TEST", "granted", 1)
        setenv("RIVULET_WASI_OTHER", "secret", 1)
        let folder = try folder()
        XCTAssertEqual(
            try run(readEnvironment, wasi: "{ env: [RIVULET_WASI_TEST] }", in: folder),
            ["0: \"RIVULET_WASI_TEST=granted\"", "10: completed"])
        XCTAssertEqual(try run(readEnvironment, wasi: "{}", in: folder), ["0: \"none\"", "10: completed"])
    }

    /// Opens `data/greeting.txt` (under the first granted directory, descriptor 3) with `flags`.
    private func open(flags: Int) -> String {
        """
        int fd = 0;
        int failed = path_open(3, 0, "greeting.txt", 12, \(flags), 0x1fffffffULL, 0x1fffffffULL, 0, &fd);
        if (failed) { emit_errno(failed); return 0; }
        iovec vector = { text, sizeof text }; size_t read = 0;
        fd_read(fd, &vector, 1, &read);
        emit_text(read);
        return 0;
        """
    }

    func testAGrantedDirectoryCanBeReadButNotWritten() throws {
        let folder = try folder()
        XCTAssertEqual(
            try run(open(flags: 0), wasi: "{ read: [\(folder)/data] }", in: folder),
            ["0: \"hello from data\"", "10: completed"])
        XCTAssertEqual(
            try run(open(flags: 1 | 8), wasi: "{ read: [\(folder)/data] }", in: folder),
            ["0: {\"errno\":76}", "10: completed"],
            "creating or truncating is refused (ENOTCAPABLE)")
        XCTAssertEqual(
            try String(contentsOfFile: folder + "/data/greeting.txt", encoding: .utf8), "hello from data\n")
    }

    func testADirectoryNotGrantedCannotBeReached() throws {
        let folder = try folder()
        let found = try run(open(flags: 0), wasi: "{}", in: folder)
        XCTAssertEqual(found.count, 2, "\(found)")
        XCTAssertTrue(found[0].hasPrefix("0: {\"errno\":"), "no directory at descriptor 3 without a grant: \(found)")
    }

    func testAGrantOfAMissingDirectoryIsALintError() throws {
        let module = try WasmTestModules.plugin("return 0;", extra: Self.wasi)
        let found = PipelineHarness().diagnostics(
            """
            source: { events: [{ at: 0ms, next: 1 }] }
            ops:
              - wasm: { module: \(module), wasi: { read: [./nowhere] } }
            sink: stdout
            """)
        XCTAssertEqual(found.count, 1, "\(found)")
        XCTAssertTrue(found[0].contains("wasm: wasi.read: './nowhere' is not a directory"), "\(found)")
    }

    /// What a module writes to its stderr reaches the runner's stderr only with `stderr: true`.
    func testStderrReachesTheRunnersOnlyWhenGranted() throws {
        let write = """
            char line[] = "note from the module\\n"; iovec vector = { line, sizeof line - 1 }; size_t written;
            emit_errno(fd_write(2, &vector, 1, &written));
            return 0;
            """
        let place = try folder()
        for granted in [true, false] {
            let (events, said) = try capturingStandardError {
                try run(write, wasi: "{ stderr: \(granted) }", in: place)
            }
            XCTAssertEqual(events.first, "0: {\"errno\":0}", "the write succeeds either way: \(events)")
            XCTAssertEqual(said.contains("note from the module"), granted, said)
        }
    }

    /// What this process writes to file descriptor 2 while `body` runs.
    private func capturingStandardError<Value>(_ body: () throws -> Value) throws -> (Value, String) {
        let file = NSTemporaryDirectory() + "rivulet-stderr-\(UUID().uuidString)"
        let capture = Glibc.open(file, O_CREAT | O_TRUNC | O_WRONLY, 0o600)
        let saved = dup(2)
        guard capture >= 0, saved >= 0 else { throw CocoaError(.fileWriteUnknown) }
        dup2(capture, 2)
        let result = Swift.Result { try body() }
        dup2(saved, 2)
        Glibc.close(saved)
        Glibc.close(capture)
        let said = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: file)
        return (try result.get(), said)
    }
}
