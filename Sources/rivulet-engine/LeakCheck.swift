import ArgumentParser
import Foundation
@_spi(Components) import Reactive

/// Under the project's own tests (`RIVULET_LEAK_CHECK=1`, debug builds): after `run` and `test`
/// every sink and disposable of the runtime must have been freed, as the in-process tests check
/// with `Resources.total`; one still alive is a subscription never released. The binary then
/// says so and exits with 70, so a test of the binary fails on a leak whatever it asserts.
enum LeakCheck {
    /// The exit status of a run that leaked (EX_SOFTWARE).
    static let status: Int32 = 70

    /// Whether this process checks.
    static var isOn: Bool { Resources.isCounting && ProcessInfo.processInfo.environment["RIVULET_LEAK_CHECK"] == "1" }

    /// Throws the leak's exit code when something is still alive; objects freed on other threads
    /// (a partition's, an HTTP client's) get a second to go.
    static func verify() throws {
        guard isOn else { return }
        let deadline = Date().addingTimeInterval(1)
        while Resources.total > 0 && Date() < deadline { usleep(1000) }
        let alive = Resources.total
        guard alive > 0 else { return }
        FileHandle.standardError.write(
            Data("rivulet: leak check: \(alive) sink(s) or disposable(s) still alive after the run\n".utf8))
        throw ExitCode(status)
    }
}
