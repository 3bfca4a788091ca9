import NIOCore
import NIOEmbedded
import NIOHTTP1
import RivuletTestSupport
import XCTest

@testable import Components

/// The guard of an HTTP server's connections, on an embedded channel and its virtual clock.
final class HTTPConnectionGuardTests: LeakCheckingTestCase {
    private func connection(_ connections: HTTPConnections, loop: EmbeddedEventLoop) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: HTTPConnectionGuard(connections), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    private let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/")

    func testARequestThatDoesNotArriveWholeInTimeClosesTheConnection() throws {
        let loop = EmbeddedEventLoop()
        let connections = HTTPConnections(
            limits: HTTPConnectionLimits(requestTimeout: .seconds(10), maxConnections: 10))
        let silent = try connection(connections, loop: loop)
        let halfway = try connection(connections, loop: loop)
        try halfway.writeInbound(HTTPServerRequestPart.head(head))
        loop.advanceTime(by: .seconds(9))
        XCTAssertTrue(silent.isActive)
        XCTAssertTrue(halfway.isActive, "the head alone does not stop the clock")
        loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(silent.isActive)
        XCTAssertFalse(halfway.isActive)
        XCTAssertEqual(connections.openCount, 0)
    }

    func testTheClockStopsWhileAnsweringAndStartsAgainAfterTheAnswer() throws {
        let loop = EmbeddedEventLoop()
        let connections = HTTPConnections(
            limits: HTTPConnectionLimits(requestTimeout: .seconds(10), maxConnections: 10))
        let channel = try connection(connections, loop: loop)
        try channel.writeInbound(HTTPServerRequestPart.head(head))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        loop.advanceTime(by: .seconds(60))
        XCTAssertTrue(channel.isActive, "a long answer (a stream of events) is not cut")
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .accepted)))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        loop.advanceTime(by: .seconds(9))
        XCTAssertTrue(channel.isActive)
        loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(channel.isActive, "idle after the answer for the timeout")
    }

    func testANewConnectionOverTheCapClosesTheOneWaitingLongest() throws {
        let loop = EmbeddedEventLoop()
        let connections = HTTPConnections(limits: HTTPConnectionLimits(requestTimeout: .seconds(10), maxConnections: 2))
        let first = try connection(connections, loop: loop)
        let second = try connection(connections, loop: loop)
        // The first is being answered: the second, waiting, makes room.
        try first.writeInbound(HTTPServerRequestPart.head(head))
        try first.writeInbound(HTTPServerRequestPart.end(nil))
        let third = try connection(connections, loop: loop)
        loop.run()
        XCTAssertTrue(first.isActive)
        XCTAssertFalse(second.isActive)
        XCTAssertTrue(third.isActive)
        XCTAssertEqual(connections.openCount, 2)
        // Both busy: a fourth is closed itself.
        try third.writeInbound(HTTPServerRequestPart.head(head))
        try third.writeInbound(HTTPServerRequestPart.end(nil))
        let fourth = try connection(connections, loop: loop)
        loop.run()
        XCTAssertFalse(fourth.isActive)
        XCTAssertTrue(first.isActive)
        XCTAssertTrue(third.isActive)
        XCTAssertEqual(connections.openCount, 2)
    }
}
