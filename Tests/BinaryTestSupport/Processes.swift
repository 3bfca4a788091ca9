import Components
import Foundation
import XCTest

/// What a run of the binary printed and how it ended.
public struct ProcessResult {
    /// The exit status (128 + the signal for a run ended by one, as a shell says).
    public var status: Int32
    /// What it wrote on standard output.
    public var stdout: String
    /// What it wrote on standard error.
    public var stderr: String

    /// A run that ended with `status`, having written `stdout` and `stderr`.
    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// The directory holding the built products (`rivulet`, the test bundle).
public func productsDirectory() -> URL {
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while url.pathComponents.count > 1 {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("rivulet").path) { return url }
    }
    return URL(fileURLWithPath: ".build/debug")
}

/// Starts `rivulet` with `arguments` and variables added to its environment; its standard
/// streams as given. Every run checks for leaks (`RIVULET_LEAK_CHECK=1`: a run or test that
/// ends with a sink or disposable of the runtime still alive exits with 70), unless
/// `environment` sets the variable otherwise.
public func startRivulet(
    _ arguments: [String], environment: [String: String] = [:], input: ChildProcess.Stream = .null,
    output: ChildProcess.Stream = .pipe, error: ChildProcess.Stream = .pipe
) throws -> ChildProcess {
    let binary = productsDirectory().appendingPathComponent("rivulet").path
    let environment = environment.merging(["RIVULET_LEAK_CHECK": "1"]) { given, _ in given }
    // env replaces itself with rivulet: the process started is rivulet's, for signals too.
    return try ChildProcess(
        executable: "env",
        arguments: environment.sorted { $0.key < $1.key }.map { "\($0)=\($1)" } + [binary] + arguments,
        input: input, output: output, error: error)
}

/// Runs `rivulet` with `arguments` and waits for it to end; a run that takes longer than
/// `timeout` seconds is killed and fails the test, so a hang can never stall the suite.
public func runRivulet(
    _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: Double = 120,
    file: StaticString = #filePath, line: UInt = #line
) throws -> ProcessResult {
    let process = try startRivulet(arguments, environment: environment, input: .pipe)
    let output = process.communicate(input: Array((stdin ?? "").utf8), timeout: timeout)
    if output.timedOut {
        XCTFail(
            "rivulet \(arguments.joined(separator: " ")) ran past \(timeout) s and was killed", file: file, line: line)
    }
    return ProcessResult(
        status: output.termination.status,
        stdout: String(decoding: output.standardOutput, as: UTF8.self),
        stderr: String(decoding: output.standardError, as: UTF8.self))
}
