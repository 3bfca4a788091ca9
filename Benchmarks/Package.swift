// swift-tools-version:6.0
// Release benchmarks of Rivulet, each beside a hand-written loop doing the same work in the same
// run. Run them with `Benchmarks/run.sh NAME` from the repository root.
import PackageDescription

let package = Package(
    name: "RivuletBenchmarks",
    dependencies: [.package(path: "../Core")],
    targets: [
        .executableTarget(
            name: "RivuletBenchmarks",
            dependencies: [.product(name: "RivuletCore", package: "Core")]
        )
    ]
)
