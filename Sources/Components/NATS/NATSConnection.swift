import CNATS
import Foundation
import Pipeline

/// How to reach a NATS server: the URLs and the credentials, as the `nats` source and sink take
/// them. Secrets are added to the redactor, so no message shows them.
struct NATSEndpoint {
    var urls: [String]
    var credentialsFile: String?
    var token: String?
    var user: String?
    var password: String?
    /// How long the run goes on without the server before it fails.
    var lostAfter: Duration

    /// The URLs as a user wrote them, for messages.
    var described: String { urls.joined(separator: ",") }
}

/// A NATS failure: the C client's status and, for JetStream calls, the server's error code.
struct NATSError: Error, CustomStringConvertible {
    let status: natsStatus
    let code: jsErrCode
    let detail: String

    /// Whether the server (or the client, by the server's max_payload) refused a message as
    /// larger than it takes.
    var isTooLarge: Bool {
        status == NATS_MAX_PAYLOAD || detail.localizedCaseInsensitiveContains("message size exceeds maximum")
    }

    init(_ status: natsStatus, code: jsErrCode = jsErrCode(rawValue: 0), doing: String) {
        self.status = status
        self.code = code
        var text = natsStatus_GetText(status).map { String(cString: $0) } ?? "status \(status.rawValue)"
        if let pointer = nats_GetLastError(nil) {
            let last = String(cString: pointer)
            if !last.isEmpty && last != text { text += " (\(last))" }
        }
        self.detail = "\(doing): \(text)"
    }

    /// libnats could not be loaded: `detail` says why (nothing of the library is called).
    init(unavailable detail: String) {
        self.status = NATS_ERR
        self.code = jsErrCode(rawValue: 0)
        self.detail = detail
    }

    var description: String { detail }

    /// Whether JetStream did not answer in time, or said it is unavailable for now (a cluster
    /// without a leader), or has too few peers for the replicas asked (a cluster whose nodes have
    /// not all joined yet: its leader may answer before it knows the others): worth asking again.
    var isPassing: Bool {
        status == NATS_TIMEOUT || code == JSClusterNotAvailErr || code == JSClusterNoPeersErr
    }

    /// Whether a call's answer says that the stream or consumer does not exist.
    static func isNotFound(_ status: natsStatus, _ code: jsErrCode) -> Bool {
        status == NATS_NOT_FOUND || code == JSStreamNotFoundErr || code == JSConsumerNotFoundErr
    }
}

/// One connection to a NATS server, with its JetStream context. The C client is thread-safe;
/// this wrapper is used from the component's I/O thread and, for acknowledgements, the
/// pipeline's.
final class NATSConnection: @unchecked Sendable {
    let connection: OpaquePointer
    private(set) var jetStream: OpaquePointer?
    let endpoint: NATSEndpoint
    private let events: ConnectionEvents

    /// What the client's threads call back into (lost, back, publish answers). The client holds
    /// it from connecting until its last callback, "closed", which may come after this wrapper
    /// is gone.
    final class ConnectionEvents: @unchecked Sendable {
        private let lock = NSLock()
        private var lostSince: ContinuousClock.Instant?
        let report: @Sendable (String) -> Void
        let publishAcks: PublishAckSink?

        init(report: @escaping @Sendable (String) -> Void, publishAcks: PublishAckSink?) {
            self.report = report
            self.publishAcks = publishAcks
        }

        private var closing = false

        func lost() { lock.withLock { lostSince = lostSince ?? .now } }
        /// The run closes the connection: its disconnection is no loss to report.
        func close() { lock.withLock { closing = true } }
        var isClosing: Bool { lock.withLock { closing } }
        func back() { lock.withLock { lostSince = nil } }
        /// How long the server has been gone, or nil while connected.
        var downFor: Duration? { lock.withLock { lostSince.map { .now - $0 } } }
    }

    /// Connects, retrying in the background while the server is away (the client reconnects for
    /// ever; the component decides when the outage is too long). `report` gets the lines a user
    /// should see (lost, reconnected).
    init(
        _ endpoint: NATSEndpoint, name: String, publishAcks: PublishAckSink? = nil, maxPending: Int = 0,
        report: @escaping @Sendable (String) -> Void
    ) throws(NATSError) {
        self.endpoint = endpoint
        self.events = ConnectionEvents(report: report, publishAcks: publishAcks)
        // libnats is loaded here, by the first connection of the run (see CNATS).
        if let problem = rivulet_nats_load_error() { throw NATSError(unavailable: String(cString: problem)) }
        var options: OpaquePointer?
        var status = natsOptions_Create(&options)
        guard status == NATS_OK, let options else { throw NATSError(status, doing: "creating the NATS options") }
        defer { natsOptions_Destroy(options) }
        try Self.configure(options, for: endpoint, name: name)
        // Retained for the client: released by the "closed" callback, the last it makes.
        let closure = Unmanaged.passRetained(events).toOpaque()
        Self.watchConnection(options, closure)
        var made: OpaquePointer?
        status = natsConnection_Connect(&made, options)
        guard status == NATS_OK, let made else {
            Unmanaged<ConnectionEvents>.fromOpaque(closure).release()  // no connection, no callback
            throw NATSError(status, doing: "cannot connect to NATS at \(endpoint.described)")
        }
        connection = made
        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        jsOptions.Wait = 5000
        if publishAcks != nil {
            jsOptions.PublishAsync.MaxPending = Int64(maxPending)
            jsOptions.PublishAsync.AckHandler = { _, message, ack, failure, closure in
                let events = Unmanaged<ConnectionEvents>.fromOpaque(closure!).takeUnretainedValue()
                events.publishAcks?.answered(message, failure: failure.map { ($0.pointee.Err, $0.pointee.ErrCode) })
                // The handler owns the message.
                natsMsg_Destroy(message)
            }
            jsOptions.PublishAsync.AckHandlerClosure = closure
        }
        var context: OpaquePointer?
        status = natsConnection_JetStream(&context, made, &jsOptions)
        guard status == NATS_OK else {
            natsConnection_Destroy(made)
            throw NATSError(status, doing: "cannot open JetStream on \(endpoint.described)")
        }
        jetStream = context
    }

    /// The servers, the credentials and the reconnection policy: for ever, every 250 ms, with
    /// what is published meanwhile buffered (64 MiB).
    private static func configure(_ options: OpaquePointer, for endpoint: NATSEndpoint, name: String) throws(NATSError)
    {
        // The client copies the URLs.
        var urls = endpoint.urls.map { strdup($0) }
        defer { for url in urls { free(url) } }
        let status = urls.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) {
                natsOptions_SetServers(options, $0.baseAddress, Int32($0.count))
            }
        }
        guard status == NATS_OK else { throw NATSError(status, doing: "the url '\(endpoint.described)'") }
        natsOptions_SetName(options, name)
        if let token = endpoint.token { natsOptions_SetToken(options, token) }
        if let user = endpoint.user { natsOptions_SetUserInfo(options, user, endpoint.password ?? "") }
        if let file = endpoint.credentialsFile { natsOptions_SetUserCredentialsFromFiles(options, file, nil) }
        natsOptions_SetTimeout(options, 2000)
        natsOptions_SetMaxReconnect(options, -1)
        natsOptions_SetReconnectWait(options, 250)
        natsOptions_SetReconnectBufSize(options, 64 * 1024 * 1024)
    }

    /// The client's callbacks to the connection's events (`closure`, retained): lost and back
    /// are reported; closed releases it.
    private static func watchConnection(_ options: OpaquePointer, _ closure: UnsafeMutableRawPointer) {
        natsOptions_SetClosedCB(
            options, { _, closure in Unmanaged<ConnectionEvents>.fromOpaque(closure!).release() }, closure)
        natsOptions_SetDisconnectedCB(
            options,
            { _, closure in
                let events = Unmanaged<ConnectionEvents>.fromOpaque(closure!).takeUnretainedValue()
                guard !events.isClosing else { return }
                events.lost()
                events.report("lost the connection to the NATS server; reconnecting")
            }, closure)
        natsOptions_SetReconnectedCB(
            options,
            { connection, closure in
                let events = Unmanaged<ConnectionEvents>.fromOpaque(closure!).takeUnretainedValue()
                events.back()
                var url = [CChar](repeating: 0, count: 256)
                natsConnection_GetConnectedUrl(connection, &url, 256)
                let text = String(decoding: url.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                events.report("reconnected to the NATS server at \(text)")
            }, closure)
    }

    /// How long the server has been unreachable, or nil while connected.
    var downFor: Duration? { events.downFor }

    /// Closes the connection (pending publishes are flushed first, for a short while).
    func close() {
        events.close()
        natsConnection_FlushTimeout(connection, 2000)
        if let jetStream { jsCtx_Destroy(jetStream) }
        jetStream = nil
        natsConnection_Close(connection)
        natsConnection_Destroy(connection)
    }
}

/// Receives JetStream's answers to asynchronous publishes, on the client's thread.
class PublishAckSink: @unchecked Sendable {
    /// `message` was stored (failure nil) or not.
    func answered(_ message: OpaquePointer?, failure: (natsStatus, jsErrCode)?) {}
}

extension Duration {
    /// Whole milliseconds, as the C client takes them.
    var natsMilliseconds: Int64 { totalNanoseconds / 1_000_000 }
}
