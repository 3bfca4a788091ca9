// swift-tools-version:6.0
// The shared core of Rivulet: everything that `rivulet` and operator plugins must share.
// It is its own package, exposed as one dynamic library, so that a plugin loaded with dlopen and
// the `rivulet` binary use a single copy of its types (see docs/architecture.md).
import PackageDescription

let package = Package(
    name: "RivuletCore",
    products: [
        .library(
            name: "RivuletCore",
            type: .dynamic,
            targets: ["Reactive", "ReactiveTesting", "Pipeline", "PluginAPI"]
        )
    ],
    targets: [
        .target(name: "Reactive"),
        .target(name: "ReactiveTesting", dependencies: ["Reactive"]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .target(name: "Pipeline", dependencies: ["Reactive", "CYAML"]),
        .target(name: "PluginAPI", dependencies: ["Pipeline", "Reactive"]),
    ]
)
