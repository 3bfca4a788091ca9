import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// A binary test with a PostgreSQL server of its own, started before each test and stopped after
/// it; skipped where PostgreSQL is not installed.
class PostgresBinaryTestCase: BinaryTestCase {
    var server: PostgresTestServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        do {
            server = try PostgresTestServer(settings: try serverSettings())
        } catch {
            throw XCTSkip("PostgreSQL did not start (scripts/install-deps.sh installs it): \(error)")
        }
    }

    /// Extra server settings (`name=value`) for the tests of a subclass.
    func serverSettings() throws -> [String] { [] }

    override func tearDown() {
        server?.stop()
        super.tearDown()
    }

    /// Waits (up to `seconds`) until the slot `slot` is confirmed up to the server's end of log.
    func waitUntilCaughtUp(slot: String, seconds: Double = 120) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            let caughtUp = try? server.psql(
                "SELECT confirmed_flush_lsn >= pg_current_wal_lsn() FROM pg_replication_slots WHERE slot_name = '\(slot)'"
            )
            if caughtUp == "t" { return true }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return false
    }
}
