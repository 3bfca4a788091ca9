import CNATS
import Pipeline
import Reactive

/// One publish of the `nats` sink, kept with its element and origin until JetStream answers.
struct NATSPublish {
    let element: Value
    let subject: String
    let data: [UInt8]
    let headers: [(String, String)]
    let msgId: String?
    let origin: Origin?
    /// Answers that were errors from the stream (a timeout or an outage is not counted).
    var tries: Int
    /// When it was first sent, on the scheduler's clock.
    var since: RxTime?
    /// Failed attempts of any kind, for the wait before the next (100 ms, doubling, 2 s at most).
    var attempts = 0

    /// The message, with its headers and msgId.
    func message() -> (OpaquePointer?, natsStatus) {
        var message: OpaquePointer?
        let status = data.withUnsafeBytes { raw in
            natsMsg_Create(&message, subject, nil, raw.baseAddress, Int32(raw.count))
        }
        guard status == NATS_OK, let message else { return (nil, status) }
        for (name, value) in headers { natsMsgHeader_Set(message, name, value) }
        // An empty msgId (`msgId: ""`) sends none: nor is one derived from the input.
        if let msgId, !msgId.isEmpty { natsMsgHeader_Set(message, "Nats-Msg-Id", msgId) }
        return (message, status)
    }

    /// A rendered subject, header or id as text.
    static func text(_ value: Value) -> String { value.stringValue ?? value.description }

    /// What to do about a publish no stream took (JetStream's "no responders").
    static func hint(_ problem: String, subject: String) -> String {
        guard problem.lowercased().contains("no responders") else { return "" }
        return
            "; no JetStream stream stores '\(subject)': give this sink stream: NAME and create: true, or create a stream for it"
    }
}
