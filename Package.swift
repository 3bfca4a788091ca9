// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Rivulet",
    products: [
        .executable(name: "rivulet", targets: ["rivulet"])
    ],
    dependencies: [
        .package(path: "Core"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "Components",
            dependencies: [.product(name: "RivuletCore", package: "Core")]
        ),
        .executableTarget(
            name: "rivulet",
            dependencies: [
                "Components",
                .product(name: "RivuletCore", package: "Core"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "ReactiveTests",
            dependencies: [.product(name: "RivuletCore", package: "Core")]
        ),
        .testTarget(
            name: "PipelineTests",
            dependencies: [.product(name: "RivuletCore", package: "Core")]
        ),
        .testTarget(
            name: "ComponentsTests",
            dependencies: ["Components", .product(name: "RivuletCore", package: "Core")]
        ),
        .testTarget(
            name: "RivuletCLITests", dependencies: ["rivulet", "Components"], exclude: ["LintCorpus", "Golden"]),
    ]
)
