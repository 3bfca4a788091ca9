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
            targets: ["Reactive", "ReactiveTesting", "Pipeline", "PluginAPI", "PipelineHost", "PipelineTesting"]
        )
    ],
    targets: [
        .target(name: "Reactive"),
        .target(name: "ReactiveTesting", dependencies: ["Reactive"]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .target(name: "Pipeline", dependencies: ["Reactive", "CYAML"]),
        .target(name: "PluginAPI", dependencies: ["Pipeline", "Reactive"]),
        // One way to run a checked pipeline on a clock with its services: `rivulet run`, `rivulet
        // test`, the component tests and PipelineTesting's bench use it.
        .target(name: "PipelineHost", dependencies: ["Pipeline", "Reactive"]),
        // What tests drive pipelines with: the `events` timeline source, the recording sink, and
        // the bench a plugin's tests run its components on. In the one core library, not a product
        // of its own: a second library would carry a second copy of the core's types.
        .target(name: "PipelineTesting", dependencies: ["PipelineHost", "PluginAPI", "Pipeline", "Reactive"]),
    ]
)
