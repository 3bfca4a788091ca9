import Foundation
import WasmKit

/// A WebAssembly plugin module read from its file and checked against Rivulet's plugin ABI
/// (`docs/plugins.md`): what it imports must be something the host gives. Its exports are
/// checked when it is instantiated (`WasmPluginInstance`), since their types are known then.
struct WasmPluginModule {
    /// The ABI version this host speaks; a module's `rivulet_abi_version` must return it.
    static let abiVersion = 1
    /// The import module of the host's functions (`emit`, `error`).
    static let hostModule = "rivulet"
    /// The import module of WASI preview 1, linked with only the capabilities the file grants.
    static let wasiModule = "wasi_snapshot_preview1"
    /// The host functions a module may import from `rivulet`.
    static let hostFunctions: Set<String> = ["emit", "error"]

    /// The parsed module.
    let module: Module
    /// Its file, as the pipeline names it (for messages).
    let path: String
    /// Whether it imports anything from WASI.
    let importsWASI: Bool

    /// Reads and parses `path` (already resolved) and checks its imports; `named` is the path
    /// as written, for messages.
    static func load(_ path: String, named: String) throws(WasmPluginError) -> WasmPluginModule {
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw WasmPluginError("cannot read the module '\(named)': \(error.localizedDescription)")
        }
        return try parse(bytes, named: named)
    }

    /// Parses a module's bytes and checks its imports; `named` is its file as written.
    static func parse(_ bytes: [UInt8], named: String) throws(WasmPluginError) -> WasmPluginModule {
        let module: Module
        do {
            module = try parseWasm(bytes: bytes)
        } catch {
            throw WasmPluginError("'\(named)' is not a WebAssembly module: \(WasmPluginError.plain(error))")
        }
        var importsWASI = false
        for item in module.imports {
            switch item.module {
            case wasiModule:
                importsWASI = true
            case hostModule where hostFunctions.contains(item.name):
                continue
            case hostModule:
                throw WasmPluginError(
                    "'\(named)' imports rivulet.\(item.name), which the host does not give",
                    note: "the host gives rivulet.emit and rivulet.error (ABI version \(abiVersion))")
            default:
                throw WasmPluginError(
                    "'\(named)' imports \(item.module).\(item.name), which the host does not give",
                    note: "a module may import rivulet.emit, rivulet.error and WASI preview 1 functions")
            }
        }
        return WasmPluginModule(module: module, path: named, importsWASI: importsWASI)
    }
}

/// A plugin module that cannot be used, or an element it failed on: the message says which.
struct WasmPluginError: Error, CustomStringConvertible {
    /// What went wrong.
    let message: String
    /// A hint for lint, if one fits.
    let note: String?
    /// Whether the instance it came from must be thrown away (a trap, fuel or memory exhausted,
    /// a bad pointer): its memory may be half way through an element.
    let brokeInstance: Bool
    /// Whether the call was ended because the run was interrupted: the element did not fail.
    let isStop: Bool

    init(_ message: String, note: String? = nil, brokeInstance: Bool = false, isStop: Bool = false) {
        self.message = message
        self.note = note
        self.brokeInstance = brokeInstance
        self.isStop = isStop
    }

    var description: String { message }

    /// An error of WasmKit's as plain text: some of its errors print a message by its Swift debug
    /// text (`"Message(text: \"...\")" at offset 0x2a`); that is cut down to the text itself.
    static func plain(_ error: any Error) -> String {
        var text = "\(error)"
        while let start = text.range(of: "Message(text: \"") {
            // The text runs to the first quote not escaped, then ")".
            var index = start.upperBound
            var unescaped = ""
            var closed = false
            while index < text.endIndex {
                let character = text[index]
                if character == "\\", text.index(after: index) < text.endIndex {
                    index = text.index(after: index)
                    unescaped.append(text[index])
                } else if character == "\"" {
                    closed = true
                    break
                } else {
                    unescaped.append(character)
                }
                index = text.index(after: index)
            }
            guard closed, text[text.index(after: index)...].hasPrefix(")") else { break }
            // Whatever names the type before it (`WasmParser.WasmParserError.`) goes too.
            var from = start.lowerBound
            while from > text.startIndex,
                text[text.index(before: from)].isLetter || text[text.index(before: from)] == "."
            {
                from = text.index(before: from)
            }
            text.replaceSubrange(from...text.index(index, offsetBy: 1), with: unescaped)
        }
        return text
    }
}
