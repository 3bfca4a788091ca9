@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@testable import Components

/// The `wasm` operator on the virtual clock, with modules compiled from C: what a module emits,
/// each fault as `onError` routes it, and the checks lint makes of a module.
final class WasmOperatorTests: LeakCheckingTestCase {
    private let letters = """
        source: { events: [{ at: 10ms, next: { name: ana } }, { at: 20ms, next: { name: bo } }, { at: 30ms, complete: true }] }
        """

    private func run(_ module: String, _ settings: String = "", onError: String = "fail", source: String? = nil)
        throws -> PipelineHarness
    {
        try PipelineHarness().run(
            """
            streams:
              main:
                \(source ?? letters)
                ops:
                  - wasm: { module: \(module)\(settings.isEmpty ? "" : ", " + settings), onError: \(onError) }
            sinks:
              - { stream: main, record: out }
              \(onError == "errors" ? "- { stream: main.errors, record: errors }" : "")
            """)
    }

    // MARK: what a module emits

    func testAModuleMapsEachElement() throws {
        let module = try WasmTestModules.plugin(
            """
            for (size_t i = 0; i < length; i++) if (element[i] >= 'a' && element[i] <= 'z') element[i] -= 32;
            rivulet_emit(element, length);
            return 0;
            """)
        XCTAssertEqual(
            try run(module).events(), ["10: {\"NAME\":\"ANA\"}", "20: {\"NAME\":\"BO\"}", "30: completed"])
    }

    func testAModuleFiltersElements() throws {
        let module = try WasmTestModules.plugin(
            """
            rivulet_span name;
            if (rivulet_field(element, length, "name", &name) && name.length == 3) rivulet_emit(element, length);
            return 0;
            """)
        XCTAssertEqual(try run(module).events(), ["10: {\"name\":\"ana\"}", "30: completed"])
    }

    func testAModuleExpandsAnElementIntoSeveral() throws {
        let module = try WasmTestModules.plugin(
            """
            rivulet_span name;
            if (!rivulet_field(element, length, "name", &name)) return rivulet_fail("no name");
            for (size_t i = 0; i < name.length; i++) {
                char letter[3] = { '"', name.start[i], '"' };
                rivulet_emit(letter, 3);
            }
            return 0;
            """)
        XCTAssertEqual(
            try run(module).events(),
            ["10: \"a\"", "10: \"n\"", "10: \"a\"", "20: \"b\"", "20: \"o\"", "30: completed"])
    }

    func testConfigIsGivenOnceBeforeTheFirstElement() throws {
        let module = try WasmTestModules.build(
            """
            #include "rivulet.h"
            RIVULET_STATELESS()
            static char suffix[32]; static size_t suffix_length; static int inits;
            RIVULET_EXPORT(rivulet_init) int init(const char *config, size_t length) {
                rivulet_span found;
                if (!rivulet_field(config, length, "suffix", &found) || found.length > 30) return rivulet_fail("no suffix");
                for (size_t i = 0; i < found.length; i++) suffix[i] = found.start[i];
                suffix_length = found.length;
                inits++;
                return 0;
            }
            RIVULET_EXPORT(tag) int tag(char *element, size_t length) {
                char out[64]; size_t n = 0;
                rivulet_span name; rivulet_field(element, length, "name", &name);
                out[n++] = '"';
                for (size_t i = 0; i < name.length; i++) out[n++] = name.start[i];
                for (size_t i = 0; i < suffix_length; i++) out[n++] = suffix[i];
                out[n++] = '0' + inits;
                out[n++] = '"';
                rivulet_emit(out, n);
                return 0;
            }
            """)
        XCTAssertEqual(
            try run(module, "function: tag, config: { suffix: \"-x\" }").events(),
            ["10: \"ana-x1\"", "20: \"bo-x1\"", "30: completed"])
    }

    // MARK: faults, as onError routes them

    /// A module that counts the elements it saw (its state) and emits the count, failing as
    /// `fault` says on the element named `bo`.
    private func faulty(_ fault: String, extra: String = "") throws -> String {
        try WasmTestModules.plugin(
            """
            rivulet_span name;
            rivulet_field(element, length, "name", &name);
            seen++;
            if (name.length == 2) { \(fault) }
            char out[1] = { '0' + seen };
            rivulet_emit(out, 1);
            return 0;
            """, extra: "static int seen;\n" + extra)
    }

    private let three = """
        source: { events: [{ at: 10ms, next: { name: ana } }, { at: 20ms, next: { name: bo } }, { at: 30ms, next: { name: cy } }, { at: 40ms, next: { name: dan } }, { at: 50ms, complete: true }] }
        """

    /// Runs `fault` with onError: errors; returns the output and the errors' messages.
    private func routed(_ fault: String, _ settings: String = "", extraC: String = "") throws -> (
        out: [String], errors: [String]
    ) {
        let harness = try run(try faulty(fault, extra: extraC), settings, onError: "errors", source: three)
        let errors = harness.recorders["errors"]?.events.compactMap { _, event -> String? in
            guard case .object(let report)? = event.element, case .string(let message)? = report["error"] else {
                return nil
            }
            return message
        }
        return (harness.events(), errors ?? [])
    }

    func testAnErrorTheModuleReportsDropsTheElementAndKeepsItsState() throws {
        let (out, errors) = try routed("return rivulet_fail(\"two letters\");")
        XCTAssertEqual(out, ["10: 1", "40: 4", "50: completed"], "the instance went on counting")
        XCTAssertEqual(errors.count, 2)
        XCTAssertEqual(errors.first, "the module failed on the element: two letters")
    }

    func testATrapDropsTheElementAndAFreshInstanceTakesTheNext() throws {
        let (out, errors) = try routed("__builtin_trap();")
        XCTAssertEqual(out, ["10: 1", "40: 1", "50: completed"], "a fresh instance after each trap")
        XCTAssertEqual(errors, ["the module trapped: unreachable", "the module trapped: unreachable"])
    }

    func testAnEndlessLoopIsStoppedByItsFuel() throws {
        let (out, errors) = try routed("for (volatile int spin = 0;; spin++) {}", "fuel: 100000")
        XCTAssertEqual(out, ["10: 1", "40: 1", "50: completed"])
        XCTAssertEqual(errors.first, "the module ran out of fuel (100000 units for one call; an endless loop?)")
    }

    func testMemoryGrownPastTheCapFailsTheElement() throws {
        let (out, errors) = try routed("__builtin_wasm_memory_grow(0, 100);", "maxMemoryMiB: 2")
        XCTAssertEqual(out, ["10: 1", "40: 1", "50: completed"])
        XCTAssertEqual(errors.first, "the module's memory would grow to 6 MiB, past maxMemoryMiB (2 MiB)")
    }

    func testBytesOutsideTheModulesMemoryFailTheElementNotTheRunner() throws {
        let (out, errors) = try routed("rivulet_emit((const char *)0x7ffffff0, 100);")
        XCTAssertEqual(out, ["10: 1", "40: 1", "50: completed"])
        XCTAssertTrue(
            errors.first?.hasPrefix("the module called rivulet.emit with bytes outside its memory (2147483632+100")
                == true, "\(errors)")
    }

    func testAStoreOutsideTheModulesMemoryIsATrap() throws {
        let (out, errors) = try routed("*(volatile int *)0x7ffffff0 = 1;")
        XCTAssertEqual(out, ["10: 1", "40: 1", "50: completed"])
        XCTAssertEqual(errors.first, "the module trapped: out of bounds memory access")
    }

    func testEmittedTextThatIsNotJSONFailsTheElement() throws {
        let (out, errors) = try routed("rivulet_emit(\"{oops\", 5); return 0;")
        XCTAssertEqual(out, ["10: 1", "40: 4", "50: completed"])
        XCTAssertTrue(errors.first?.hasPrefix("the module emitted something that is not JSON") == true, "\(errors)")
    }

    func testOnErrorFailStopsTheRunWithTheModulesMessage() throws {
        let harness = try run(try faulty("__builtin_trap();"), source: three)
        XCTAssertEqual(harness.events().first, "10: 1")
        XCTAssertTrue(harness.events().last?.hasPrefix("20: error ") == true, "\(harness.events())")
        XCTAssertTrue(harness.events().last?.contains("the module trapped: unreachable") == true)
    }

    /// WASI's proc_exit ends the call, not the runner: the element fails, a fresh instance takes the next.
    func testProcExitFailsTheElementNotTheRunner() throws {
        let (out, errors) = try routed(
            "exit_now(3);",
            extraC:
                #"__attribute__((import_module("wasi_snapshot_preview1"), import_name("proc_exit"))) void exit_now(int);"#
        )
        XCTAssertEqual(out, ["10: 1", "40: 1", "50: completed"], "a fresh instance after each exit")
        XCTAssertEqual(errors, ["the module exited (WASI proc_exit 3)", "the module exited (WASI proc_exit 3)"])
    }

    /// A module whose rivulet_init fails stops the run with what it said, before any element.
    func testAnInitThatFailsStopsTheRunWithItsMessage() throws {
        let module = try WasmTestModules.plugin(
            "return 0;",
            extra: """
                RIVULET_EXPORT(rivulet_init) int init(char *config, size_t length) {
                    return rivulet_fail("no such key");
                }
                """)
        let events = try run(module, "config: { key: user }").events()
        XCTAssertEqual(events.count, 1, "\(events)")
        XCTAssertTrue(events.first?.contains("error") == true, "\(events)")
        XCTAssertTrue(events.first?.contains("no such key") == true, "\(events)")
    }

    // MARK: lint

    private func lint(_ settings: String) -> [String] {
        PipelineHarness().diagnostics(
            """
            source: { events: [{ at: 0ms, next: 1 }] }
            ops:
              - wasm:
                  \(settings.split(separator: "\n").joined(separator: "\n      "))
            sink: stdout
            """)
    }

    func testAMissingFunctionIsALintErrorAtTheModuleLine() throws {
        let module = try WasmTestModules.plugin("return 0;")
        let found = lint("module: \(module)\nfunction: proces")
        XCTAssertEqual(found.count, 1, "\(found)")
        XCTAssertTrue(found[0].hasPrefix("4:15: wasm: '\(module)' has no export 'proces'"), "\(found)")
    }

    func testAWrongABIVersionIsALintErrorAtTheModuleLine() throws {
        let module = try WasmTestModules.build(
            """
            __attribute__((export_name("rivulet_abi_version"))) int version(void) { return 7; }
            static char buffer[1024];
            __attribute__((export_name("rivulet_buffer"))) char *take(int size) { return buffer; }
            __attribute__((export_name("process"))) int process(char *element, int length) { return 0; }
            """)
        let found = lint("module: \(module)")
        XCTAssertEqual(
            found, ["4:15: wasm: '\(module)' speaks plugin ABI version 7, this rivulet speaks version 1"])
    }

    func testAFileThatIsNoModuleAndAMissingFileAreLintErrors() throws {
        let text = NSTemporaryDirectory() + "rivulet-not-wasm-\(getpid()).wasm"
        try "hello".write(toFile: text, atomically: true, encoding: .utf8)
        let found = lint("module: \(text)").first ?? ""
        XCTAssertTrue(found.contains("is not a WebAssembly module: \"magic header not detected"), found)
        // WasmKit printed its message by its Swift debug text: `"Message(text: \"magic ...\")"`.
        XCTAssertFalse(found.contains("Message(text:"), found)
        XCTAssertTrue(
            lint("module: /nowhere/x.wasm").first?.hasPrefix("4:15: wasm: cannot read the module '/nowhere/x.wasm'")
                == true, "\(lint("module: /nowhere/x.wasm"))")
    }

    func testAnImportTheHostDoesNotGiveIsALintError() throws {
        let module = try WasmTestModules.plugin(
            "now(); return 0;", extra: "__attribute__((import_module(\"env\"), import_name(\"now\"))) void now(void);")
        XCTAssertEqual(
            lint("module: \(module)"),
            ["4:15: wasm: '\(module)' imports env.now, which the host does not give"])
    }

    func testAModuleStartingWithMoreMemoryThanTheCapIsALintError() throws {
        let module = try WasmTestModules.plugin(
            "big[length] = 1; return 0;", extra: "static volatile char big[3 << 20];")
        let found = lint("module: \(module)\nmaxMemoryMiB: 2")
        XCTAssertEqual(found.count, 1, "\(found)")
        XCTAssertEqual(
            found.first,
            "4:15: wasm: '\(module)' cannot be instantiated: the module's memory would grow to 3 MiB, "
                + "past maxMemoryMiB (2 MiB)")
    }

    func testFuelAndMemoryPastTheirCeilingsAreLintErrors() throws {
        let module = try WasmTestModules.plugin("return 0;")
        XCTAssertEqual(
            lint("module: \(module)\nfuel: 2000000000"),
            ["5:13: wasm: fuel is 2000000000, more than the 1000000000 one call may have"])
        XCTAssertEqual(
            lint("module: \(module)\nmaxMemoryMiB: 100000"),
            ["5:21: wasm: maxMemoryMiB is 100000, more than the 1024 a module may have"])
        XCTAssertEqual(lint("module: \(module)\nfuel: 1000000000\nmaxMemoryMiB: 1024"), [])
    }

    func testAFunctionBodyThatDoesNotValidateIsALintErrorThoughItIsNeverCalled() throws {
        // `broken` is compiled as local.get 0; i32.const 12345; i32.add: its constant becomes three
        // nops and an f32.add, which an i32 on the stack cannot feed.
        let valid = try WasmTestModules.plugin(
            "return 0;", extra: "RIVULET_EXPORT(broken) int broken(int x) { return x + 12345; }")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: valid)))
        let constant: [UInt8] = [0x41, 0xB9, 0xE0, 0x00]
        let places = (0...(bytes.count - constant.count)).filter { Array(bytes[$0..<$0 + constant.count]) == constant }
        XCTAssertEqual(places.count, 1)
        bytes.replaceSubrange(places[0]..<places[0] + 4, with: [0x01, 0x01, 0x01, 0x92])
        let broken = NSTemporaryDirectory() + "rivulet-broken-body-\(getpid()).wasm"
        try Data(bytes).write(to: URL(fileURLWithPath: broken))
        let found = lint("module: \(broken)")
        XCTAssertEqual(found.count, 1, "\(found)")
        XCTAssertTrue(found.first?.hasPrefix("4:15: wasm: '\(broken)' cannot be instantiated: ") == true, "\(found)")
        XCTAssertEqual(lint("module: \(valid)"), [], "the module before the change is fine")
    }

    func testASnapshotPastItsCeilingFailsAndOneWithinItIsKept() throws {
        func module(megabytes: Int) throws -> WasmPluginInstance {
            let path = try WasmTestModules.plugin(
                "return 0;",
                extra: """
                    static char chunk[1 << 20];
                    RIVULET_EXPORT(rivulet_snapshot) int snapshot(void) {
                        for (int i = 0; i < \(megabytes); i++) rivulet_emit(chunk, sizeof chunk);
                        return 0;
                    }
                    RIVULET_EXPORT(rivulet_restore) int restore(char *state, size_t length) { return 0; }
                    """, stateless: false)
            return try WasmPluginInstance(
                WasmPluginModule.load(path, named: "m.wasm"), function: "process",
                limits: WasmPluginLimits(fuel: 100_000_000, memoryBytes: 64 << 20), grants: WASIGrants())
        }
        XCTAssertEqual(try module(megabytes: 64).snapshot()?.count, 64 << 20)
        XCTAssertThrowsError(try module(megabytes: 65).snapshot()) { error in
            XCTAssertEqual("\(error)", "the module's snapshot is larger than the 64 MiB a snapshot may have")
        }
    }

    func testASnapshotWithoutRestoreIsALintError() throws {
        let module = try WasmTestModules.plugin(
            "return 0;", extra: "RIVULET_EXPORT(rivulet_snapshot) int snapshot(void) { return 0; }", stateless: false)
        let found = lint("module: \(module)")
        XCTAssertEqual(found.count, 1, "\(found)")
        XCTAssertTrue(
            found.first?.hasPrefix("4:15: wasm: '\(module)' exports rivulet_snapshot without rivulet_restore") == true,
            "\(found)")
    }

    func testConfigForAModuleWithoutInitAndAModuleWithoutStateAreSaid() throws {
        let stateful = try WasmTestModules.plugin("return 0;", stateless: false)
        let found = lint("module: \(stateful)\nconfig: { a: 1 }")
        XCTAssertEqual(found.count, 2, "\(found)")
        XCTAssertTrue(found.contains("5:15: wasm: '\(stateful)' takes no config: it exports no rivulet_init"))
        XCTAssertTrue(
            found.contains {
                $0.hasPrefix("4:15: wasm: '\(stateful)' exports neither rivulet_snapshot/rivulet_restore")
            })
        XCTAssertEqual(lint("module: \(try WasmTestModules.plugin("return 0;"))"), [], "a stateless module is quiet")
    }
}
