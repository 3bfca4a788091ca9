@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

@_spi(Host) @_spi(Components) @testable import Pipeline

/// Which parts of what a file writes are secret, and how they are masked.
final class SecretsTests: LeakCheckingTestCase {
    func testAURLsUserPartIsSecretButADatabaseURLsRoleNameIsNot() {
        XCTAssertEqual(Secrets.urlCredentials(in: "https://TOKEN123@api.example/x"), ["TOKEN123"])
        XCTAssertEqual(Secrets.urlCredentials(in: "nats://alice:pw12@127.0.0.1:4222"), ["alice:pw12"])
        XCTAssertEqual(Secrets.urlCredentials(in: "postgresql://postgres@127.0.0.1/shop"), [])
        XCTAssertEqual(Secrets.urlCredentials(in: "postgres://rivulet:hunter22@db/shop"), ["hunter22"])
    }

    func testALibpqPasswordSettingIsMasked() {
        let secrets = Secrets.shared
        ConnectionPasswords.add(in: "host=db user=app password=pa55word dbname=shop", to: secrets)
        ConnectionPasswords.add(in: "host=db password='with space' port=5", to: secrets)
        ConnectionPasswords.add(in: "postgresql://db/shop?sslmode=require&password=qu3ry-pw", to: secrets)
        XCTAssertEqual(
            secrets.redact("password=pa55word, 'with space', qu3ry-pw"),
            "password=REDACTED, 'REDACTED', REDACTED")
    }
}
