// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Rivulet",
    products: [
        // The command people run: a launcher that blocks the stop signals and starts the engine.
        .executable(name: "rivulet", targets: ["rivulet"]),
        .executable(name: "rivulet-engine", targets: ["rivulet-engine"]),
    ],
    dependencies: [
        .package(path: "Core"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // The `wasm` operator's WebAssembly runtime (an interpreter written in Swift, with fuel
        // metering and WASI).
        .package(url: "https://github.com/swiftwasm/WasmKit", .upToNextMinor(from: "0.4.2")),
    ],
    targets: [
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // Shared libraries loaded on the first call of one of their functions (dlopen), not at
        // every start of the engine: see lazy_library.h.
        .target(name: "CLazyLoading"),
        // The NATS C client (JetStream included), for the `nats` source and sink: its headers
        // (libnats-dev), and libnats loaded on first use (lazy.c, by scripts/lazy-libraries.py).
        .target(name: "CNATS", dependencies: ["CLazyLoading"]),
        // libpq, PostgreSQL's C client: queries and the logical replication stream. Its headers
        // (libpq-dev), and libpq loaded on first use (lazy.c, by scripts/lazy-libraries.py).
        .target(name: "CPostgres", dependencies: ["CLazyLoading"]),
        // SQLite's headers (libsqlite3-dev), and libsqlite3 loaded on first use (lazy.c, by
        // scripts/lazy-libraries.py): a run that keeps no state does not load it.
        .target(name: "CSQLite", dependencies: ["CLazyLoading"]),
        // PostgreSQL connections: bound statements, rows one at a time, the copy-both replication
        // stream and the `pgoutput` decoder. The `postgres` source and sink use it.
        .target(name: "Postgres", dependencies: ["CPostgres"]),
        // SQLite connections: statements with bound values, typed rows. The state store and the
        // `sqlite` source and sink use it.
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        // Checkpoints on disk (`rivulet run --state`): an SQLite database. Only the CLI uses it;
        // components see checkpoints through the core's `Checkpoints`.
        .target(
            name: "StateStore", dependencies: ["SQLite", "CSQLite", .product(name: "RivuletCore", package: "Core")]),
        .target(
            name: "Components",
            dependencies: [
                "CLibXML2",
                "CNATS",
                "SQLite",
                "Postgres",
                .product(name: "RivuletCore", package: "Core"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "WasmKit", package: "WasmKit"),
                .product(name: "WasmKitWASI", package: "WasmKit"),
                .product(name: "WASI", package: "WasmKit"),
            ]
        ),
        // The HTTP server the tests start on 127.0.0.1: scripted exchanges, real sockets.
        .target(
            name: "HTTPTestServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/HTTPTestServer"
        ),
        // What drives pipelines from outside: the `rivulet test` runner and the component and graph
        // descriptions. The CLI and the tests use it; plugins never see it.
        .target(
            name: "Tooling",
            dependencies: ["Components", .product(name: "RivuletCore", package: "Core")]
        ),
        // What every runtime and pipeline test case shares: the check that it leaked no subscription.
        .target(
            name: "RivuletTestSupport",
            dependencies: [.product(name: "RivuletCore", package: "Core")],
            path: "Tests/TestSupport"
        ),
        // libFuzzer targets (`make fuzz`); a normal build replays inputs once (`make test` runs the seeds).
        .executableTarget(
            name: "RivuletFuzz",
            dependencies: [
                "Components", "Tooling", "SQLite", "Postgres", .product(name: "RivuletCore", package: "Core"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        // Blocks SIGINT and SIGTERM before any initialiser runs (see early_signals.c).
        .target(name: "CEarlySignals"),
        // `rivulet`: a C program linked statically, so that a SIGINT or SIGTERM 2 ms after start is
        // already blocked; it replaces itself with `rivulet-engine` beside it (see main.c).
        .executableTarget(
            name: "rivulet",
            dependencies: ["CEarlySignals"],
            // swiftc links the Swift runtime into every executable, unused here; its one link-time
            // warning (dlopen in a static program) is silenced with GNU ld, as gold cannot.
            linkerSettings: [
                .unsafeFlags([
                    "-static-executable", "-use-ld=bfd", "-Xlinker", "--gc-sections", "-Xlinker", "-s",
                    "-Xlinker", "--no-warnings",
                ])
            ]
        ),
        // The engine: every command, in Swift.
        .executableTarget(
            name: "rivulet-engine",
            dependencies: [
                "CEarlySignals",
                "Components",
                "Tooling",
                "StateStore",
                .product(name: "RivuletCore", package: "Core"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            plugins: ["BuildInfo"]
        ),
        // The commit `rivulet --version` prints, written before each build.
        .plugin(name: "BuildInfo", capability: .buildTool()),
        .testTarget(
            name: "ReactiveTests",
            dependencies: ["RivuletTestSupport", .product(name: "RivuletCore", package: "Core")]
        ),
        .testTarget(
            name: "PipelineTests",
            dependencies: ["RivuletTestSupport", .product(name: "RivuletCore", package: "Core")]
        ),
        .testTarget(
            name: "ComponentsTests",
            dependencies: [
                "Components", "CLazyLoading", "RivuletTestSupport", .product(name: "RivuletCore", package: "Core"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ToolingTests",
            dependencies: [
                "Tooling", "Components", "RivuletTestSupport", .product(name: "RivuletCore", package: "Core"),
            ]
        ),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "RivuletTestSupport"]),
        .testTarget(
            name: "StateStoreTests",
            dependencies: ["StateStore", .product(name: "RivuletCore", package: "Core")]
        ),
        // What the binary's tests share: a scratch directory a test, the binary run and killed,
        // plain HTTP to a run's endpoints.
        .target(
            name: "BinaryTestSupport",
            dependencies: ["Components", "HTTPTestServer", "RivuletTestSupport"],
            path: "Tests/BinaryTestSupport"
        ),
        // The binary driven as a user drives it: commands, output, exit codes, a terminal.
        .testTarget(
            name: "RivuletCLITests",
            dependencies: [
                "rivulet-engine", "Components", "HTTPTestServer", "RivuletTestSupport", "BinaryTestSupport",
            ],
            exclude: ["LintCorpus", "Golden", "SchemaCorpus"]),
        // What needs more than the binary, or minutes: nats-server and PostgreSQL, a browser, runs
        // killed with SIGKILL at random, timing under load, plugins built and docs run end to end.
        .testTarget(
            name: "RivuletIntegrationTests",
            dependencies: [
                "rivulet-engine", "Components", "HTTPTestServer", "RivuletTestSupport", "BinaryTestSupport", "CNATS",
                .product(name: "RivuletCore", package: "Core"),
            ]),
    ]
)
