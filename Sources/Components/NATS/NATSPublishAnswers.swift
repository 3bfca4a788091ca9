import CNATS
import Foundation

/// JetStream's answers, matched to publishes by the key kept in a header-less map: the C
/// client hands back the message it published, whose pointer is the key. Answers that arrive
/// together reach the run in one action: one wake-up of its thread a burst, not one an answer.
final class NATSPublishAnswers: PublishAckSink, @unchecked Sendable {
    private let lock = NSCondition()
    private var keys: [OpaquePointer: Int] = [:]
    private var arrived: [(key: Int, problem: NATSPublishProblem?)] = []
    /// Schedules the hand-over of what arrived (set once the sink has started; given the
    /// answers rather than holding them, so that they do not hold themselves).
    var schedule: (@Sendable (NATSPublishAnswers) -> Void)?

    func expect(_ message: OpaquePointer, key: Int) { lock.withLock { keys[message] = key } }
    func forget(_ message: OpaquePointer) { lock.withLock { keys[message] = nil } }

    override func answered(_ message: OpaquePointer?, failure: (natsStatus, jsErrCode)?) {
        let problem = failure.map {
            NATSPublishProblem(
                text: NATSError($0.0, code: $0.1, doing: "not stored").description, status: $0.0, code: $0.1)
        }
        let first: Bool? = lock.withLock {
            guard let message, let key = keys.removeValue(forKey: message) else { return nil }
            arrived.append((key, problem))
            lock.signal()
            return arrived.count == 1
        }
        if first == true { schedule?(self) }
    }

    /// What arrived since the last call, waiting up to `seconds` for something to arrive.
    func take(waiting seconds: Double) -> [(key: Int, problem: NATSPublishProblem?)] {
        lock.withLock {
            if arrived.isEmpty { _ = lock.wait(until: Date(timeIntervalSinceNow: seconds)) }
            defer { arrived = [] }
            return arrived
        }
    }

    /// What arrived since the last call.
    func take() -> [(key: Int, problem: NATSPublishProblem?)] {
        lock.withLock {
            defer { arrived = [] }
            return arrived
        }
    }
}

/// Why JetStream did not store a publish.
struct NATSPublishProblem {
    let text: String
    let status: natsStatus
    let code: jsErrCode
}
