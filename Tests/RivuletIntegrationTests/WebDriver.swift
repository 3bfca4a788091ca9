import BinaryTestSupport
import Components
import Foundation
import RivuletTestSupport
import XCTest

/// Headless Chromium driven through chromedriver's W3C WebDriver protocol (JSON over HTTP on
/// 127.0.0.1), for the browser tests: open a page, run a script in it, click, take a screenshot.
final class WebDriver {
    private let driver: ChildProcess
    private let port: Int
    private var session = ""

    /// Whether chromium and chromedriver are installed (`scripts/install-deps.sh`).
    static var isInstalled: Bool {
        FileManager.default.fileExists(atPath: "/usr/bin/chromedriver")
            && FileManager.default.fileExists(atPath: "/usr/bin/chromium")
    }

    /// Starts chromedriver on a free port and a headless browser `width` × `height`.
    init(width: Int = 1280, height: Int = 800) throws {
        port = freeLoopbackPort()
        driver = try ChildProcess(
            executable: "/usr/bin/chromedriver", arguments: ["--port=\(port)", "--allowed-ips=127.0.0.1"],
            output: .null, error: .null)
        let deadline = Date(timeIntervalSinceNow: 20)
        while (try? call("GET", "/status")) == nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": "/usr/bin/chromium",
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--window-size=\(width),\(height)",
                        ],
                    ],
                ]
            ]
        ]
        let answer = try call("POST", "/session", capabilities)
        session = try XCTUnwrap((answer as? [String: Any])?["sessionId"] as? String, "no session: \(answer)")
    }

    deinit {
        _ = try? call("DELETE", "/session/\(session)")
        driver.send(SIGTERM)
        _ = driver.wait()
    }

    func open(_ url: String) throws { _ = try call("POST", "/session/\(session)/url", ["url": url]) }

    /// Runs `script` in the page (a function body: `return …`) and returns its value.
    func run(_ script: String, _ arguments: [Any] = []) throws -> Any {
        try call("POST", "/session/\(session)/execute/sync", ["script": script, "args": arguments])
    }

    /// Waits (up to `timeout` s) until `script` returns true.
    func waitUntil(
        _ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
        _ script: () throws -> String
    ) throws {
        let text = try script()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if try run(text) as? Bool == true { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTFail("never \(what)", file: file, line: line)
    }

    /// Makes the window `width` × `height`.
    func resize(width: Int, height: Int) throws {
        _ = try call("POST", "/session/\(session)/window/rect", ["width": width, "height": height])
    }

    /// Makes the page see `prefers-color-scheme: dark` (or light), through Chromium's DevTools.
    func emulateColorScheme(_ scheme: String) throws {
        _ = try call(
            "POST", "/session/\(session)/goog/cdp/execute",
            [
                "cmd": "Emulation.setEmulatedMedia",
                "params": ["features": [["name": "prefers-color-scheme", "value": scheme]]],
            ])
    }

    /// The page as a PNG.
    func screenshot() throws -> Data {
        let encoded = try XCTUnwrap(try call("GET", "/session/\(session)/screenshot") as? String)
        return try XCTUnwrap(Data(base64Encoded: encoded))
    }

    /// One WebDriver command; its `value`, or a thrown error with the driver's message.
    @discardableResult
    private func call(_ method: String, _ path: String, _ body: Any? = nil) throws -> Any {
        let bytes = try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) }
        guard
            let answer = LoopbackHTTP.exchange(
                port, method, path, body: bytes ?? (method == "POST" ? [] : nil), version: "1.1")
        else { throw NSError(domain: "WebDriver", code: 2, userInfo: [NSLocalizedDescriptionKey: "no answer"]) }
        let decoded = try JSONSerialization.jsonObject(with: Data(answer.body.utf8), options: [.fragmentsAllowed])
        let value = (decoded as? [String: Any])?["value"] ?? NSNull()
        if let failure = value as? [String: Any], let error = failure["error"] as? String {
            throw NSError(
                domain: "WebDriver", code: 1,
                userInfo: [NSLocalizedDescriptionKey: "\(error): \(failure["message"] ?? "")"])
        }
        return value
    }
}
