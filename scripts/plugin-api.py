#!/usr/bin/env python3
"""The plugin API: its public surface as a digest, and the binary interface plugins are checked against.

The surface is every public declaration a plugin sees through `import PluginAPI` (the modules
Reactive, Pipeline and PluginAPI) and its tests through `import PipelineTesting`, less what is
marked `@_spi(Host)` (rivulet's own use). Each declaration is one line: its kind, its qualified
name and its signature, from swift-api-digester. It is for people: what changed, in review.

The binary interface is what a plugin already built depends on: every declaration of Reactive,
Pipeline and PluginAPI that a compiled plugin can reach (swift-api-digester's ABI dump: mangled
names, the stored properties of every type in order, private ones included, enum cases, class
members, what is @usableFromInline), plus the bodies of every @inlinable, @_alwaysEmitIntoClient
and @_transparent declaration, which a plugin compiles into itself. Its SHA-256, cut to 64 bits,
is written into Core/Sources/PluginAPI/BinaryInterface.swift as `PluginAPI.binaryInterface`,
emitted into the client: a plugin carries the one it was built against, and rivulet refuses it
when they differ. A change inside a function that is not inlinable changes nothing.

  scripts/plugin-api.py check    the digest and the identifier match the built modules (CI)
  scripts/plugin-api.py update   rewrite both (`make plugin-api`)
  scripts/plugin-api.py interface MODULES_DIR SOURCES_DIR MODULE...
                                 print the identifier of other modules (the tests' own)

Run after a debug build (`swift build`), which leaves the modules in .build/debug/Modules.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIGEST = os.environ.get("PLUGIN_API_DIGEST") or os.path.join(ROOT, "Core", "PluginAPI.digest")
IDENTIFIER_SOURCE = os.environ.get("PLUGIN_API_IDENTIFIER") or os.path.join(
    ROOT, "Core", "Sources", "PluginAPI", "BinaryInterface.swift")
MODULES = ["Reactive", "Pipeline", "PluginAPI", "PipelineTesting"]
# What a built plugin links: PipelineTesting is for its tests, which are built again each time.
LINKED_MODULES = ["Reactive", "Pipeline", "PluginAPI"]
DECLS = {"TypeDecl", "Function", "Constructor", "Var", "TypeAlias", "Subscript", "AssociatedType", "EnumElement"}
INCLUDES = ["-I", os.path.join(ROOT, "Core", "Sources", "CYAML")]


def signature(node):
    types = [child.get("printedName", "") for child in node.get("children", []) if child["kind"].startswith("Type")
             and child["kind"] not in DECLS]
    parts = [" -> ".join(types)] if types else []
    if node.get("genericSig"):
        parts.append(node["genericSig"])
    if node.get("throwing"):
        parts.append("throws")
    if node.get("static") or node.get("isStatic"):
        parts.append("static")
    if node.get("protocolReq"):
        parts.append("requirement")
    if node.get("hasDefaultArg"):
        parts.append("defaults")
    return " ".join(parts)


def lines_of(node, prefix, out):
    if node.get("spi_group_names"):
        return
    if node["kind"] not in DECLS:
        return
    if "Private" in (node.get("declAttributes") or []) or node.get("isImplicit"):
        return
    name = prefix + node.get("printedName", node.get("name", "?"))
    kind = node.get("declKind", node["kind"])
    conformances = ",".join(sorted(c["name"] for c in node.get("conformances", [])))
    line = f"{kind} {name}"
    sig = signature(node)
    if sig:
        line += f" : {sig}"
    # An extension of another module's type lists no conformances: those depend on what the
    # module imports, not on what it declares (its own members are listed).
    if conformances and node["kind"] == "TypeDecl" and not node.get("isExternal"):
        line += f" [{conformances}]"
    out.add(line)
    if node["kind"] == "TypeDecl":
        for child in node.get("children", []):
            lines_of(child, name + ".", out)


def dump(module, modules_dir, abi, scratch):
    output = os.path.join(scratch, module + (".abi" if abi else "") + ".json")
    subprocess.run(
        ["swift-api-digester", "-dump-sdk"] + (["-abi"] if abi else []) + ["-module", module, "-I", modules_dir]
        + INCLUDES + ["-o", output],
        check=True, capture_output=True)
    return json.load(open(output))["ABIRoot"]


def modules_dir():
    modules = os.path.join(ROOT, ".build", "debug", "Modules")
    if not os.path.isdir(modules):
        sys.exit("error: build first (swift build): no .build/debug/Modules")
    return modules


def digest():
    lines = set()
    with tempfile.TemporaryDirectory() as scratch:
        for module in MODULES:
            for child in dump(module, modules_dir(), False, scratch).get("children", []):
                lines_of(child, module + ".", lines)
    return sorted(lines)


# The binary interface.

def reachable(node, in_class):
    """Whether a compiled plugin can depend on `node`: host-only (`@_spi(Host)`) declarations are
    left out unless they shape a layout (a type, a stored property, a class's member, which takes
    a slot of its method table) or an inlined body can call them (@usableFromInline)."""
    if "spi_group_names" not in node:
        return True
    attributes = node.get("declAttributes") or []
    return (node["kind"] == "TypeDecl" or node.get("hasStorage") or in_class
            or "UsableFromInline" in attributes)


def visible(node, public, in_class):
    """Whether a compiled plugin can see `node` at all: it is public (its USR is in the public
    dump), @usableFromInline, or part of a layout (a stored property, an enum case, a class's
    member). The modules are built for testing (-enable-testing), so the ABI dump also holds
    internal declarations, which no plugin can reach."""
    return (node.get("usr") in public or "UsableFromInline" in (node.get("declAttributes") or [])
            or node.get("hasStorage") or node["kind"] == "EnumElement" or in_class)


def public_usrs(module, modules_path, scratch):
    """Every USR of the module's public dump (no internal declaration, SPI ones included)."""
    usrs = set()

    def walk(node):
        if "usr" in node:
            usrs.add(node["usr"])
        for child in node.get("children", []):
            walk(child)
    walk(dump(module, modules_path, False, scratch))
    return usrs


def abi_lines(node, depth, in_class, out, public):
    fields = {key: value for key, value in node.items() if key not in ("children", "tool_arguments")}
    out.append("  " * depth + json.dumps(fields, sort_keys=True))
    is_class = node.get("declKind") == "Class"
    ordered, unordered = [], []
    for child in node.get("children", []):
        if child["kind"] in DECLS and not (reachable(child, is_class) and visible(child, public, is_class)):
            continue
        lines = []
        abi_lines(child, depth + 1, is_class, lines, public)
        # Order is layout for stored properties, enum cases and a class's members (and for the
        # types a declaration's children spell); elsewhere it is only where the source put it.
        if child["kind"] not in DECLS or child.get("hasStorage") or child["kind"] == "EnumElement" or is_class:
            ordered.append(lines)
        else:
            unordered.append(lines)
    for lines in ordered + sorted(unordered):
        out.extend(lines)


INLINED = re.compile(r"@(inlinable|_alwaysEmitIntoClient|_transparent)\b")


def tokens_without_comments(text):
    """The source with comments removed and runs of white space made one space; string
    literals are kept as they are (a brace in one is not code)."""
    out, i, n = [], 0, len(text)

    def space():
        if not out or out[-1][0] != "space":
            out.append(("space", " "))

    while i < n:
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            space()
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            space()
        elif text[i] == '"':
            quote = '"""' if text.startswith('"""', i) else '"'
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                j += 2 if text[j] == "\\" else 1
            out.append(("string", text[i:j + len(quote)]))
            i = j + len(quote)
        elif text[i].isspace():
            while i < n and text[i].isspace():
                i += 1
            space()
        else:
            out.append(("code", text[i]))
            i += 1
    return out


def inlined_bodies(source_dirs, skip):
    """Each @inlinable (or always-emitted, or transparent) declaration's text, from its attribute
    to the brace that closes its body, without comments."""
    bodies = []
    for directory in source_dirs:
        for folder, _, files in os.walk(directory):
            for name in sorted(files):
                path = os.path.join(folder, name)
                if not name.endswith(".swift") or os.path.abspath(path) == os.path.abspath(skip):
                    continue
                items = tokens_without_comments(open(path, encoding="utf-8").read())
                text = "".join(value for _, value in items)
                # Positions in `text` of code characters (not inside strings).
                code, offset = [], 0
                for kind, value in items:
                    if kind == "code":
                        code.append(offset)
                    offset += len(value)
                code_at = set(code)
                for match in INLINED.finditer(text):
                    if match.start() not in code_at:
                        continue
                    # The body is the first brace outside the signature's parentheses (a closure
                    # given as a default argument has braces too) to the brace that closes it.
                    depth, parens, end = 0, 0, None
                    for position in code:
                        if position <= match.start():
                            continue
                        character = text[position]
                        if depth == 0 and character in "([":
                            parens += 1
                        elif depth == 0 and character in ")]":
                            parens -= 1
                        elif character == "{" and (depth > 0 or parens == 0):
                            depth += 1
                        elif character == "}" and depth > 0:
                            depth -= 1
                            if depth == 0:
                                end = position + 1
                                break
                    if end is not None:
                        bodies.append(text[match.start():end].strip())
    return sorted(bodies)


def interface(modules, modules_path, source_dirs, skip=""):
    """The binary interface's identifier: 0x and 16 hexadecimal digits."""
    lines = []
    with tempfile.TemporaryDirectory() as scratch:
        for module in modules:
            public = public_usrs(module, modules_path, scratch)
            abi_lines(dump(module, modules_path, True, scratch), 0, False, lines, public)
    import hashlib
    hasher = hashlib.sha256()
    hasher.update("\n".join(lines).encode())
    hasher.update(b"\n--- inlined bodies\n")
    hasher.update("\n".join(inlined_bodies(source_dirs, skip)).encode())
    return "0x" + hasher.hexdigest()[:16]


def core_interface():
    sources = [os.path.join(ROOT, "Core", "Sources", module) for module in LINKED_MODULES]
    return interface(LINKED_MODULES, modules_dir(), sources, skip=IDENTIFIER_SOURCE)


def written_identifier():
    if not os.path.exists(IDENTIFIER_SOURCE):
        return None
    match = re.search(r"binaryInterface: UInt64 \{ (0x[0-9a-f_]+) \}", open(IDENTIFIER_SOURCE).read())
    return match.group(1).replace("_", "") if match else None


def write_identifier(identifier):
    grouped = "0x" + "_".join(identifier[2 + i:6 + i] for i in range(0, 16, 4))
    with open(IDENTIFIER_SOURCE, "w") as file:
        file.write(f"""// Generated by scripts/plugin-api.py update (`make plugin-api`); CI checks it is current.

extension PluginAPI {{
    /// The binary interface of the core this code was compiled against: a digest of every
    /// declaration a compiled plugin can depend on (layouts, symbols, inlined bodies). Emitted
    /// into the client, so a plugin's `rivulet_plugin_interface` entry point returns the one it
    /// was built with, and `rivulet` refuses a plugin whose interface is not its own.
    @_alwaysEmitIntoClient public static var binaryInterface: UInt64 {{ {grouped} }}
}}
""")


def recorded():
    if not os.path.exists(DIGEST):
        return []
    return [line for line in open(DIGEST).read().splitlines() if line and not line.startswith("#")]


def write_digest(lines):
    with open(DIGEST, "w") as file:
        file.write("# The public surface plugins and their tests build against; generated by scripts/plugin-api.py update.\n")
        file.write("# A removed or changed line breaks plugins already built: PluginAPI.binaryInterface changes with it.\n")
        file.write("\n".join(lines) + "\n")


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    if command == "interface":
        if len(sys.argv) < 5:
            sys.exit("usage: plugin-api.py interface MODULES_DIR SOURCES_DIR MODULE...")
        print(interface(sys.argv[4:], sys.argv[2], [sys.argv[3]]))
        return
    old = recorded()
    new = digest()
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    identifier = core_interface()
    written = written_identifier()
    if command == "update":
        write_digest(new)
        write_identifier(identifier)
        print(f"Core/PluginAPI.digest: {len(new)} declarations; binary interface {identifier}"
              + ("" if written == identifier else f" (was {written}: plugins built before must be rebuilt)"))
        return
    if not removed and not added and written == identifier:
        print(f"plugin API: {len(new)} declarations, binary interface {identifier}, unchanged")
        return
    if removed or added:
        print("error: the plugin API changed; record it with `make plugin-api`:")
        for line in removed[:50]:
            print("  - " + line)
        for line in added[:50]:
            print("  + " + line)
    if written != identifier:
        print(f"error: the binary interface changed ({written} -> {identifier}): plugins built before are refused"
              " until rebuilt; write the new one with `make plugin-api`")
    sys.exit(1)


if __name__ == "__main__":
    main()
