import Foundation
import Postgres

/// How far a replication slot may be confirmed: the end of the longest run of transactions, in
/// commit order, whose every change is done (written by every sink, or dropped on purpose).
/// The server keeps the log from the confirmed position on and sends everything after it again
/// to the next reader, so a change not done when a runner dies is read again, never lost.
///
/// A change that failed (a sink refused it and `onError` let the run go on) holds the position
/// at its transaction for the rest of the run: the next run reads it again.
///
/// Thread-safe: the reader thread opens transactions and reads the position, the pipeline's
/// thread marks changes done.
final class PostgresConfirmations: @unchecked Sendable {
    /// One transaction read from the stream.
    final class Transaction: @unchecked Sendable {
        /// Where the log after its commit starts: confirming it confirms the transaction.
        fileprivate(set) var end: LogSequenceNumber?
        fileprivate var pending = 0
        fileprivate var failed = false
    }

    private let lock = NSLock()
    private var open: [Transaction] = []
    private var confirmedPosition: LogSequenceNumber

    /// Confirmations starting at `position` (the slot's confirmed position when the run began).
    init(from position: LogSequenceNumber = .zero) {
        confirmedPosition = position
    }

    /// The position the slot may be confirmed at now.
    var confirmed: LogSequenceNumber { lock.withLock { confirmedPosition } }

    /// The position last sent to the server: it sends no transaction that committed before it
    /// again (a checkpoint forgets those).
    var told: LogSequenceNumber {
        get { lock.withLock { toldPosition } }
        set { lock.withLock { toldPosition = max(toldPosition, newValue) } }
    }
    private var toldPosition = LogSequenceNumber.zero

    /// Whether every transaction read is done (nothing would be read again).
    var isIdle: Bool { lock.withLock { open.isEmpty } }

    /// Whether every change of `transaction` is done and it committed (none failed).
    func isDone(_ transaction: Transaction) -> Bool {
        lock.withLock { transaction.end != nil && transaction.pending == 0 && !transaction.failed }
    }

    /// A transaction begins (its changes follow, then its commit).
    func begin() -> Transaction {
        let transaction = Transaction()
        lock.withLock { open.append(transaction) }
        return transaction
    }

    /// One more change of `transaction` is on its way through the pipeline.
    func add(to transaction: Transaction) {
        lock.withLock { transaction.pending += 1 }
    }

    /// `transaction` committed at `end`: once its changes are done, the slot may move there.
    func commit(_ transaction: Transaction, end: LogSequenceNumber) {
        lock.withLock {
            transaction.end = end
            advance()
        }
    }

    /// One change of `transaction` is done (`failed`: it went wrong and must be read again).
    func done(_ transaction: Transaction, failed: Bool) {
        lock.withLock {
            transaction.pending -= 1
            if failed { transaction.failed = true }
            advance()
        }
    }

    /// The server says it has sent everything up to `end`: with nothing open, everything before
    /// it is done (the log of tables not published, say), so the slot may move there too.
    func idle(at end: LogSequenceNumber) {
        lock.withLock {
            if open.isEmpty, end > confirmedPosition { confirmedPosition = end }
        }
    }

    private func advance() {
        var index = 0
        while index < open.count, let end = open[index].end, open[index].pending == 0, !open[index].failed {
            if end > confirmedPosition { confirmedPosition = end }
            index += 1
        }
        if index > 0 { open.removeFirst(index) }
    }
}
