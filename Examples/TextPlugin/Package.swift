// swift-tools-version:6.0
// An example operator plugin: `slugify` and `wordCount`, loaded by `rivulet` with dlopen.
// It depends on the RivuletCore product (one dynamic library shared with rivulet) and builds a
// dynamic library of its own.
import PackageDescription

let package = Package(
    name: "TextPlugin",
    products: [.library(name: "TextPlugin", type: .dynamic, targets: ["TextPlugin"])],
    dependencies: [.package(path: "../../Core")],
    targets: [
        .target(name: "TextPlugin", dependencies: [.product(name: "RivuletCore", package: "Core")]),
        // PipelineTesting (the bench its tests run pipelines on) is part of the RivuletCore product.
        .testTarget(
            name: "TextPluginTests",
            dependencies: ["TextPlugin", .product(name: "RivuletCore", package: "Core")]
        ),
    ]
)
