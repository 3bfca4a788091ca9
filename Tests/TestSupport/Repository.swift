import Foundation

/// The checkout the tests run in.
public enum Repository {
    /// Its root: the folder holding Package.swift, README.md, docs/ and Pipelines/.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
}
