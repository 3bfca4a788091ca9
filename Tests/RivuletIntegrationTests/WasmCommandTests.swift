import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// The `wasm` operator through the binary: the example plugin as its Makefile builds it, and a
/// module's state in checkpoints while runs that follow a growing file are killed.
final class WasmCommandTests: BinaryTestCase {
    private static let example = Repository.root.appendingPathComponent("Examples/WasmPlugin").path

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func testTheExamplesMakefileBuildsTheCommittedModuleAndItsPipelinePassesItsTests() throws {
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        make.arguments = ["make", "-s", "-C", Self.example, "OUT=\(directory.path)"]
        try make.run()
        make.waitUntilExit()
        XCTAssertEqual(make.terminationStatus, 0)
        let built = try Data(contentsOf: URL(fileURLWithPath: path("quota.wasm")))
        let committed = try Data(contentsOf: URL(fileURLWithPath: Self.example + "/quota.wasm"))
        XCTAssertTrue(
            built == committed, "quota.wasm is quota.c as built by its Makefile: run make in Examples/WasmPlugin")
        let tested = try runRivulet(["test", Self.example])
        XCTAssertEqual(tested.status, 0, tested.stdout + tested.stderr)
        assertContains(tested.stdout, "2 passed, 0 failed")
    }

    func testTheCommandsOfThePluginsPageRunAsWritten() throws {
        let page = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/plugins.md"), encoding: .utf8)
        let blocks = page.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let commands = blocks.flatMap { $0.split(separator: "\n").map(String.init) }
        XCTAssertEqual(commands, ["make -C Examples/WasmPlugin", "rivulet test Examples/WasmPlugin"])
        for command in commands {
            let shell = try ChildProcess(
                executable: "/bin/bash",
                arguments: [
                    "-c",
                    "cd '\(Repository.root.path)' && PATH='\(productsDirectory().path)':$PATH \(command)",
                ])
            let ended = shell.communicate(timeout: 120)
            XCTAssertEqual(
                ended.termination.status, 0,
                command + ": " + String(decoding: ended.standardOutput + ended.standardError, as: UTF8.self))
        }
    }

    func testAModulesStateKilledAtRandomWhileAFollowedFileGrowsPassesEachKeysFirstElementsOnce() throws {
        let total = 60_000
        let pipeline = """
            name: quota
            source: { file: { path: in.jsonl, follow: true, poll: 10ms } }
            ops:
              - take: \(total)
              - wasm: { module: \(Self.example)/quota.wasm, function: quota, config: { key: user, limit: 40 } }
            sink: { file: out.jsonl }
            """
        try pipeline.write(toFile: path("p.yaml"), atomically: true, encoding: .utf8)
        var lines: [String] = []
        var expected = ""
        var counts: [Int: Int] = [:]
        for index in 0..<total {
            let user = (index * 7919) % 997
            let line = "{\"user\":\"u\(user)\",\"i\":\(index)}"
            lines.append(line)
            counts[user, default: 0] += 1
            if counts[user]! <= 40 { expected += line + "\n" }
        }
        let bytes = [UInt8](lines.map { $0 + "\n" }.joined().utf8)
        let input = path("in.jsonl")
        let firstChunk = bytes.prefix(30_000).lastIndex(of: 0x0A)! + 1
        try Data(bytes[..<firstChunk]).write(to: URL(fileURLWithPath: input))
        let arguments = ["run", path("p.yaml"), "--state", path("s.db"), "--checkpoint-interval", "15ms"]
        let first = try runRivulet(arguments + ["--until", "300ms"])
        XCTAssertEqual(first.status, 0, first.stdout + first.stderr)
        let killed = try runKilledAtRandom(
            arguments,
            whileWriting: {
                var offset = firstChunk
                let descriptor = open(input, O_WRONLY | O_APPEND)
                // Small pieces, so that the writing lasts a few seconds and the runs are killed
                // several times (with pieces of up to 30 KB it lasted about one, and the four kills
                // asked for below were not always made).
                while offset < bytes.count {
                    let end = min(bytes.count, offset + Int.random(in: 2_000...8_000))
                    bytes[offset..<end].withUnsafeBytes { _ = Glibc.write(descriptor, $0.baseAddress, $0.count) }
                    offset = end
                    usleep(useconds_t.random(in: 5_000...20_000))
                }
                close(descriptor)
            })
        XCTAssertGreaterThan(killed, 3)
        let output = try String(contentsOfFile: path("out.jsonl"), encoding: .utf8).split(separator: "\n").map(
            String.init)
        let wanted = expected.split(separator: "\n").map(String.init)
        XCTAssertEqual(output.count, wanted.count)
        XCTAssertTrue(output == wanted, "each user's first 40 elements, once, in order (\(killed) kills)")
    }

    /// `source` (C, with the example's rivulet.h) compiled to `name` in the test's folder.
    private func compile(_ source: String, to name: String) throws {
        try source.write(toFile: path(name + ".c"), atomically: true, encoding: .utf8)
        let clang = Process()
        clang.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        clang.arguments = [
            "clang", "--target=wasm32", "-O2", "-nostdlib", "-fno-builtin", "-mbulk-memory", "-Wl,--no-entry", "-I",
            Self.example, "-o", path(name), path(name + ".c"),
        ]
        try clang.run()
        clang.waitUntilExit()
        XCTAssertEqual(clang.terminationStatus, 0, "clang \(name)")
    }

    /// Reads `process`'s standard output until it has said `count` lines (10 s at most).
    private func waitForLines(
        _ count: Int, from process: ChildProcess, into lines: inout [String], file: StaticString = #filePath,
        line: UInt = #line
    ) -> [String] {
        let deadline = Date(timeIntervalSinceNow: 10)
        var pending = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while lines.count < count && Date() < deadline {
            var descriptor = pollfd(fd: process.standardOutput, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let read = Glibc.read(process.standardOutput, &buffer, buffer.count)
            guard read > 0 else { break }
            pending += buffer[..<read]
            while let end = pending.firstIndex(of: 0x0A) {
                lines.append(String(decoding: pending[..<end], as: UTF8.self))
                pending.removeSubrange(...end)
            }
        }
        if lines.count < count { XCTFail("never \(count) lines: \(lines)", file: file, line: line) }
        return lines
    }

    func testASignalEndsACallThatWouldRunForItsWholeFuel() throws {
        // A stop waited for the running call: an endless loop with the most fuel a call may have
        // took minutes, and needed SIGKILL.
        try compile(
            """
            #include "rivulet.h"
            RIVULET_STATELESS()
            RIVULET_EXPORT(process) int process(char *element, size_t length) {
                for (volatile int spin = 0;; spin++) {}
            }
            """, to: "loop.wasm")
        try """
        source: { events: [{ at: 0ms, next: 1 }] }
        ops:
          - wasm: { module: loop.wasm, function: process, fuel: 1000000000 }
        sink: stdout
        """.write(toFile: path("p.yaml"), atomically: true, encoding: .utf8)
        let run = try startRivulet(["run", path("p.yaml")], output: .null)
        Thread.sleep(forTimeInterval: 1)
        let sent = Date()
        run.send(SIGTERM)
        let ended = run.communicate(timeout: 60)
        let seconds = Date().timeIntervalSince(sent)
        XCTAssertEqual(ended.termination, .exited(143), String(decoding: ended.standardError, as: UTF8.self))
        XCTAssertLessThan(seconds, 1, "stopped \(seconds) s after the signal")
    }

    func testUnderWatchAChangedModuleIsSwappedInWithItsStateAndABrokenOneLeavesTheOldRunning() throws {
        let quota = try String(contentsOfFile: Self.example + "/quota.c", encoding: .utf8)
        try compile(quota, to: "first.wasm")
        // The second version passes what the first did, marked, so the output shows which ran.
        let marked = quota.replacingOccurrences(
            of: "if (*count < limit) rivulet_emit(element, length);",
            with: #"if (*count < limit) rivulet_emit("{\"user\":\"second\"}", 17);"#)
        XCTAssertNotEqual(marked, quota)
        try compile(marked, to: "second.wasm")
        try FileManager.default.copyItem(atPath: path("first.wasm"), toPath: path("m.wasm"))
        try """
        source: { file: { path: in.jsonl, follow: true, poll: 10ms } }
        ops:
          - wasm: { module: m.wasm, function: quota, config: { key: user, limit: 2 } }
        sink: stdout
        """.write(toFile: path("p.yaml"), atomically: true, encoding: .utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: path("in.jsonl"), contents: nil))
        let process = try startRivulet(["run", path("p.yaml"), "--watch"])
        var lines: [String] = []
        defer { if process.exited() == nil { process.send(SIGKILL) } }
        let input = FileHandle(forWritingAtPath: path("in.jsonl"))!
        func send(_ user: String) { input.write(Data("{\"user\":\"\(user)\"}\n".utf8)) }
        /// Replaces the module as a build does (a new file renamed over the old), past the next look.
        func replace(with name: String) throws {
            try FileManager.default.copyItem(atPath: path(name), toPath: path("next.wasm"))
            XCTAssertEqual(rename(path("next.wasm"), path("m.wasm")), 0)
            Thread.sleep(forTimeInterval: 0.4)
        }

        // The file is followed from its end: the first line waits until the run reads it.
        Thread.sleep(forTimeInterval: 1)
        send("ana")
        XCTAssertEqual(waitForLines(1, from: process, into: &lines), [#"{"user":"ana"}"#])
        try replace(with: "second.wasm")
        send("ana")
        XCTAssertEqual(
            waitForLines(2, from: process, into: &lines).last, #"{"user":"second"}"#,
            "the second module took the next element")
        send("ana")
        send("bo")
        XCTAssertEqual(
            waitForLines(3, from: process, into: &lines),
            [#"{"user":"ana"}"#, #"{"user":"second"}"#, #"{"user":"second"}"#],
            "ana's third element is dropped: the first module's counts were handed over")
        let garbage = path("garbage.wasm")
        try Data("not a module".utf8).write(to: URL(fileURLWithPath: garbage))
        try replace(with: "garbage.wasm")
        send("cy")
        XCTAssertEqual(
            waitForLines(4, from: process, into: &lines).last, #"{"user":"second"}"#, "the second module goes on")
        process.send(SIGTERM)
        let stderr = String(decoding: process.communicate(timeout: 30).standardError, as: UTF8.self)
        assertContains(
            stderr, "loaded the changed module 'm.wasm'; the old one's state handed over",
            "the changed module 'm.wasm' cannot be swapped in: 'm.wasm' is not a WebAssembly module",
            "the old one goes on")
    }
}
