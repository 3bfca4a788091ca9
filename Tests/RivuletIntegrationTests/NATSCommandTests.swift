import BinaryTestSupport
import Foundation
import RivuletTestSupport
import XCTest

/// `rivulet nats publish`, `read` and `list` against a real nats-server: lines in, messages out
/// from the start, a sequence, the end or followed, with their envelope on request; no consumer
/// left behind; the server from $NATS_URL; a misspelt stream or group named with a suggestion.
final class NATSCommandTests: OneNATSServerTestCase {
    private func rivulet(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
        try runRivulet(arguments, stdin: stdin, environment: ["NATS_URL": natsURL], timeout: 60)
    }

    private func consumers() throws -> String {
        try rivulet(["nats", "list"]).stdout.components(separatedBy: "\n\n")[1]
    }

    func testPublishedLinesAreReadBackFromWhereAskedAndNoConsumerIsLeft() throws {
        let refused = try rivulet(["nats", "publish", "orders.new"], stdin: "{\"id\":0}\n")
        XCTAssertEqual(refused.status, 1)
        assertContains(refused.stderr, "no stream stores 'orders.new'")
        try
            "source: { events: [{ at: 0ms, complete: true }] }\nsink: { nats: { subject: orders.new, stream: ORDERS, create: true } }\n"
            .write(toFile: path("make.yaml"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try rivulet(["run", path("make.yaml")]).status, 0)

        let published = try rivulet(
            ["nats", "publish", "orders.new"], stdin: "{\"id\": 1}\n\n{\"id\":2}\nplain text\n")
        XCTAssertEqual(published.status, 0, published.stderr)
        assertContains(published.stderr, "published 3 messages to orders.new")

        let all = try rivulet(["nats", "read", "ORDERS"])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(all.stdout, "{\"id\":1}\n{\"id\":2}\n\"plain text\"\n")
        let bySubject = try rivulet(["nats", "read", "orders.*", "--from", "2", "--meta"])
        let lines = bySubject.stdout.split(separator: "\n").map { String($0) }
        XCTAssertEqual(lines.count, 2, bySubject.stderr)
        let first = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        XCTAssertEqual(first["subject"] as? String, "orders.new")
        XCTAssertEqual(first["sequence"] as? Int, 2)
        XCTAssertEqual((first["data"] as? [String: Any])?["id"] as? Int, 2)
        XCTAssertNotNil((first["time"] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT"#, options: .regularExpression))
        XCTAssertEqual(try rivulet(["nats", "read", "ORDERS", "--from", "last"]).stdout, "\"plain text\"\n")
        XCTAssertEqual(try rivulet(["nats", "read", "ORDERS", "--count", "1"]).stdout, "{\"id\":1}\n")
        XCTAssertEqual(try rivulet(["nats", "read", "ORDERS", "--from", "new"]).stdout, "", "nothing new")
        assertContains(try consumers(), "no consumer")

        // Followed: new messages as they come, until a signal; its consumer is deleted then too.
        let follower = try startRivulet(
            ["nats", "read", "ORDERS", "--from", "new", "--follow"], environment: ["NATS_URL": natsURL])
        Thread.sleep(forTimeInterval: 1)
        assertContains(try consumers(), "rivulet-read-")
        XCTAssertEqual(try rivulet(["nats", "publish", "orders.new"], stdin: "{\"id\":4}\n").status, 0)
        Thread.sleep(forTimeInterval: 1)
        follower.send(SIGINT)
        let followed = follower.communicate(timeout: 30)
        XCTAssertEqual(followed.termination, .exited(130))
        XCTAssertEqual(String(decoding: followed.standardOutput, as: UTF8.self), "{\"id\":4}\n")
        assertContains(try consumers(), "no consumer")

        let listed = try rivulet(["nats", "list"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        assertContains(listed.stdout, "STREAM  SUBJECTS    MESSAGES  BYTES  CONSUMERS\nORDERS  orders.new  4")
    }

    /// `--from` an RFC 3339 time reads what was stored from then on; a `--from` that is none of
    /// the forms is an error that lists them.
    func testReadFromATimeGivesWhatWasStoredAfterItAndAnyOtherFromIsExplained() throws {
        try
            "source: { events: [{ at: 0ms, complete: true }] }\nsink: { nats: { subject: orders.new, stream: ORDERS, create: true } }\n"
            .write(toFile: path("make.yaml"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try rivulet(["run", path("make.yaml")]).status, 0)
        XCTAssertEqual(try rivulet(["nats", "publish", "orders.new"], stdin: "{\"id\":1}\n").status, 0)
        // The next whole second, a moment after the first was stored and before the second is.
        let between = (Date().timeIntervalSince1970 + 1).rounded(.up)
        Thread.sleep(until: Date(timeIntervalSince1970: between + 0.3))
        XCTAssertEqual(try rivulet(["nats", "publish", "orders.new"], stdin: "{\"id\":2}\n").status, 0)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let time = formatter.string(from: Date(timeIntervalSince1970: between))
        let after = try rivulet(["nats", "read", "ORDERS", "--from", time])
        XCTAssertEqual(after.status, 0, after.stderr)
        XCTAssertEqual(after.stdout, "{\"id\":2}\n", "from \(time)")
        let wrong = try rivulet(["nats", "read", "ORDERS", "--from", "yesterday"])
        XCTAssertEqual(wrong.status, 1)
        assertContains(
            wrong.stderr,
            "--from takes all, new, last, a stream sequence (from 1) or an RFC 3339 time; got 'yesterday'")
        assertContains(try consumers(), "no consumer")
    }

    func testAMisspeltStreamOrGroupIsNamedWithWhatIsThere() throws {
        try
            "source: { events: [{ at: 0ms, complete: true }] }\nsink: { nats: { subject: orders.new, stream: ORDERS, create: true } }\n"
            .write(toFile: path("make.yaml"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try rivulet(["run", path("make.yaml")]).status, 0)
        let stream = try rivulet(["nats", "read", "ORDRS"])
        XCTAssertEqual(stream.status, 1)
        assertContains(
            stream.stderr, "no stream named 'ORDRS' or storing it", "streams: ORDERS; did you mean 'ORDERS'?")
        let group = try rivulet(["partitions", "--group", "totals"])
        XCTAssertEqual(group.status, 1)
        assertContains(group.stderr, "no group 'totals'", "there is no runner group on \(natsURL)")
        let badFrom = try rivulet(["nats", "read", "ORDERS", "--from", "yesterday"])
        XCTAssertEqual(badFrom.status, 1)
        assertContains(badFrom.stderr, "--from takes all, new, last, a stream sequence")
    }
}
