#!/usr/bin/env python3
"""Writes the C that loads libnats, libpq and libsqlite3 on first use (Sources/CNATS/lazy.c,
Sources/CPostgres/lazy.c, Sources/CSQLite/lazy.c).

The engine does not link these libraries: linked, the dynamic loader maps and relocates them (and
the twenty libraries the first two bring: OpenSSL, GnuTLS, Kerberos, LDAP...) at every start, about
a fifth of the process's start, though most runs never connect to NATS or PostgreSQL, or keep state
in SQLite. Instead each function the Swift code calls is defined here with the header's own
prototype (the compiler checks each against the header), and calls the library's function through a
pointer looked up with `dlsym` when one is first called (`dlopen` of the library then).

    scripts/lazy-libraries.py           # writes the files
    scripts/lazy-libraries.py --check   # exits 1 if one is not what it would write

The functions are those of the library's headers whose names appear in Sources/ or Tests/ (Swift).
A function called from Swift and missing here is an undefined symbol when the engine is linked.
"""
import json, os, re, subprocess, sys, tempfile, glob

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LIBRARIES = [
    # (target, header, the headers' folder, library file names tried in turn, what a user installs)
    ("CNATS", "nats/nats.h", "/nats/", ["libnats.so.3.4", "libnats.so"], "libnats3.4 (the NATS C client)"),
    ("CPostgres", "postgresql/libpq-fe.h", "/postgresql/", ["libpq.so.5", "libpq.so"], "libpq5 (PostgreSQL's client library)"),
    ("CSQLite", "sqlite3.h", "/sqlite3.h", ["libsqlite3.so.0", "libsqlite3.so"], "libsqlite3-0 (SQLite)"),
]


def declarations(header):
    """Every function the header declares: name -> (file, declaration)."""
    with tempfile.NamedTemporaryFile("w", suffix=".c") as source:
        source.write(f"#include <{header}>\n")
        source.flush()
        dump = subprocess.run(["clang", "-fsyntax-only", "-Xclang", "-ast-dump=json", source.name],
                              check=True, capture_output=True, text=True).stdout
    found, file = {}, None
    for node in json.loads(dump)["inner"]:
        location = node.get("loc", {})
        # The JSON names a file only where it changes from the node before.
        file = location.get("file") or (location.get("expansionLoc") or {}).get("file") or file
        if node.get("kind") == "FunctionDecl":
            found[node["name"]] = (file, node)
    return found


def swift_identifiers():
    names = set()
    for path in glob.glob(f"{root}/Sources/**/*.swift", recursive=True) + glob.glob(f"{root}/Tests/**/*.swift", recursive=True):
        names.update(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", open(path).read()))
    return names


def return_type(qual_type):
    """The return type of a function type `R (A, B)`: what comes before its last top-level `(`."""
    depth = 0
    for index in range(len(qual_type) - 1, -1, -1):
        character = qual_type[index]
        if character == ")":
            depth += 1
        elif character == "(":
            depth -= 1
            if depth == 0:
                return qual_type[:index].rstrip()
    raise ValueError(f"not a function type: {qual_type}")


def wrapper(name, node, index, prefix):
    parameters = [p["type"]["qualType"] for p in node.get("inner", []) if p.get("kind") == "ParmVarDecl"]
    if node.get("variadic") or any("[" in t or ("(*" in t and t.count("(*)") != 1) for t in parameters):
        sys.exit(f"{name}: a variadic function or a parameter of an array type is not supported")
    returned = return_type(node["type"]["qualType"])

    def parameter(type, index):
        # A pointer to a function, `R (*)(A)`, is named inside: `R (*p1)(A)`.
        if "(*)" in type:
            return type.replace("(*)", f"(*p{index})")
        return f"{type}{'' if type.endswith('*') else ' '}p{index}"

    declared = ", ".join(parameter(t, i) for i, t in enumerate(parameters)) or "void"
    arguments = ", ".join(f"p{i}" for i in range(len(parameters)))
    call = f"((__typeof__(&{name})){prefix}_function({index}))({arguments})"
    body = f"{call};" if returned == "void" else f"return {call};"
    return f"{returned}{'' if returned.endswith('*') else ' '}{name}({declared}) {{ {body} }}\n"


def generate(target, header, folder, files, package, identifiers):
    prefix = "rivulet_" + target[1:].lower()
    found = declarations(header)
    used = sorted(name for name, (file, _) in found.items() if file and folder in file and name in identifiers)
    lines = [
        f"// Written by scripts/lazy-libraries.py: do not edit. {len(used)} functions of <{header}>, each calling\n",
        f"// the library's own, which is loaded on the first call (see lazy_library.h).\n",
        f"#include <{header}>\n",
        "\n",
        '#include "lazy_library.h"\n',
        "\n",
        f"static const char *const {prefix}_names[] = {{\n",
    ]
    lines += [f'    "{name}",\n' for name in used]
    lines += [
        "};\n",
        f'static const char *const {prefix}_files[] = {{{", ".join(chr(34) + f + chr(34) for f in files)}, NULL}};\n',
        f"static void *{prefix}_pointers[{len(used)}];\n",
        f"static struct rivulet_lazy_library {prefix}_library = {{\n",
        f'    "{package}", {prefix}_files, {prefix}_names, {prefix}_pointers, {len(used)}, 0, NULL, "",\n',
        "};\n",
        "\n",
        f"const char *{prefix}_load_error(void) {{ return rivulet_lazy_load_error(&{prefix}_library); }}\n",
        "\n",
        f"static inline void *{prefix}_function(int index) {{ return rivulet_lazy_function(&{prefix}_library, index); }}\n",
        "\n",
    ]
    lines += [wrapper(name, found[name][1], index, prefix) for index, name in enumerate(used)]
    return "".join(lines)


def main():
    check = "--check" in sys.argv[1:]
    identifiers = swift_identifiers()
    stale = []
    for target, header, folder, files, package in LIBRARIES:
        path = os.path.join(root, "Sources", target, "lazy.c")
        text = generate(target, header, folder, files, package, identifiers)
        current = open(path).read() if os.path.exists(path) else None
        if current == text:
            continue
        if check:
            stale.append(path)
        else:
            open(path, "w").write(text)
            print(f"wrote {os.path.relpath(path, root)}")
    if stale:
        print("not what scripts/lazy-libraries.py writes (run it): " + ", ".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
