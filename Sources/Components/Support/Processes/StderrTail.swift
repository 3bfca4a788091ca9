import Foundation

/// The last 2 KiB of a program's standard error, collected as it is written.
final class StderrTail: @unchecked Sendable {
    /// The tail of what `descriptor` (a program's standard error) carries, read on a thread of its own.
    static func reading(_ descriptor: Int32) -> StderrTail {
        let tail = StderrTail()
        // The thread owns a duplicate, so closing the process's end never races with its read.
        let owned = dup(descriptor)
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(owned, &buffer, buffer.count)
                if count > 0 {
                    tail.append(buffer[0..<count])
                } else if count == 0 || errno != EINTR {
                    break
                }
            }
            close(owned)
            tail.finish()
        }.start()
        return tail
    }

    private let condition = NSCondition()
    private var bytes: [UInt8] = []
    private var finished = false

    func append(_ data: ArraySlice<UInt8>) {
        condition.withLock {
            bytes.append(contentsOf: data)
            if bytes.count > 2048 { bytes.removeFirst(bytes.count - 2048) }
        }
    }

    /// The program closed its standard error (it exited).
    func finish() {
        condition.withLock {
            finished = true
            condition.broadcast()
        }
    }

    var text: String {
        // A program that failed is usually exiting: wait briefly for the last of what it wrote.
        condition.lock()
        let limit = Date(timeIntervalSinceNow: 0.2)
        while !finished && condition.wait(until: limit) {}
        let text = String(decoding: bytes, as: UTF8.self)
        condition.unlock()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
