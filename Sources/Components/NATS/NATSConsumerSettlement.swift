import CNATS
import Foundation
@_spi(Components) import Pipeline

// How a fetched message leaves the consumer: acknowledged, given back, sent to the dead letters,
// with the copies JetStream delivered while it was processed, and the room this frees for fetches.
extension NATSConsumer {
    /// A message given back without being delivered (the run ended first).
    func giveBack(_ message: OpaquePointer, sequence: UInt64 = 0) {
        condition.lock()
        defer { condition.unlock() }
        for message in [message] + takeCopies(of: sequence) {
            held.remove(message)
            if !closed { natsMsg_Nak(message, nil) }
            natsMsg_Destroy(message)
            inFlight -= 1
        }
    }

    /// Whether `message` (stream sequence `sequence`) is to be processed: not when it is a copy
    /// the server delivered again while the first is still being processed here (a message that
    /// waited in the client's queue past ackWait while the fetch loop waited for room). The copy
    /// is settled with the first, never processed twice. Pipeline's thread.
    func admit(_ message: OpaquePointer, sequence: UInt64) -> Bool {
        guard coverage != nil, sequence > 0 else { return true }
        condition.lock()
        defer { condition.unlock() }
        guard copies[sequence] == nil else {
            copies[sequence, default: []].append(message)
            meter?.count("nats_copies_held_total")
            return false
        }
        copies[sequence] = []
        return true
    }

    /// The copies of the message at `sequence` delivered while it was processed, now settled with
    /// it (the lock held).
    func takeCopies(of sequence: UInt64) -> [OpaquePointer] {
        guard sequence > 0 else { return [] }
        return copies.removeValue(forKey: sequence) ?? []
    }

    /// Acknowledges `message`, or sends it back: at once if the run was abandoned (unless a
    /// committed checkpoint holds its effect, `checkpointed`: then it is done whatever became of
    /// the run), after nakDelay if it failed, to the dead-letter subject once it failed
    /// maxDeliver times.
    func settle(_ message: OpaquePointer, failure: String?, sequence: UInt64 = 0, checkpointed: Bool = false) {
        condition.lock()
        defer { condition.unlock() }
        let abandoned = ending.isAbandoned && !checkpointed
        // Copies delivered while it was processed go as it goes: acknowledged, or back.
        for copy in takeCopies(of: sequence) {
            held.remove(copy)
            if !closed {
                if failure == nil && !abandoned { natsMsg_Ack(copy, nil) } else { natsMsg_Nak(copy, nil) }
            }
            natsMsg_Destroy(copy)
            settled()
        }
        held.remove(message)
        if closed {
            natsMsg_Destroy(message)
            return
        }
        if let failure {
            var meta: UnsafeMutablePointer<jsMsgMetaData>?
            var delivered = 1
            if natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta {
                delivered = Int(meta.pointee.NumDelivered)
                jsMsgMetaData_Destroy(meta)
            }
            if delivered >= settings.maxDeliver {
                if settings.deadLetter != nil {
                    // Published (and then acknowledged) by the fetch thread: a JetStream publish waits.
                    deadLetters.append((message, failure))
                    condition.broadcast()
                    return
                }
                natsMsg_Term(message, nil)
            } else {
                natsMsg_NakWithDelay(message, settings.nakDelay.natsMilliseconds, nil)
            }
        } else if abandoned {
            // Let go while a failed or stopped run was torn down: not finished, so it goes back.
            natsMsg_Nak(message, nil)
        } else {
            natsMsg_Ack(message, nil)
            if sequence > 0 { coverage?.cover(sequence) }
        }
        natsMsg_Destroy(message)
        settled()
    }

    func release() {
        condition.lock()
        settled()
        condition.unlock()
    }

    /// The room a fetch waits for.
    var fetchRoom: Int { min(settings.batch, settings.maxAckPending) }

    /// One message fewer in flight; the fetch loop is woken when a batch fits again (the lock held).
    func settled() {
        inFlight -= 1
        if settings.maxAckPending - inFlight == fetchRoom { condition.signal() }
    }

    /// Publishes the dead letters settled since the fetch loop last did.
    func publishPendingDeadLetters() {
        condition.lock()
        let letters = deadLetters
        deadLetters = []
        condition.unlock()
        publishDeadLetters(letters)
    }

    func publishDeadLetters(_ letters: [(OpaquePointer, String)]) {
        guard let js = connection.jetStream, let subject = settings.deadLetter else { return }
        for (message, failure) in letters {
            var copy: OpaquePointer?
            let length = natsMsg_GetDataLength(message)
            natsMsg_Create(&copy, subject, nil, natsMsg_GetData(message), length)
            if let copy {
                natsMsgHeader_Set(copy, "Rivulet-Error", String(failure.prefix(1000)).replacing("\n", with: " "))
                natsMsgHeader_Set(copy, "Rivulet-Subject", natsMsg_GetSubject(message))
                var code = jsErrCode(rawValue: 0)
                var ack: UnsafeMutablePointer<jsPubAck>?
                let status = js_PublishMsg(&ack, js, copy, nil, &code)
                jsPubAck_Destroy(ack)
                natsMsg_Destroy(copy)
                // Not stored: leave the message to come back rather than lose it, and say so once
                // (without a stream for the subject, every such message comes back for ever).
                if status != NATS_OK {
                    if !reportedUnstoredDeadLetter {
                        reportedUnstoredDeadLetter = true
                        report(
                            "cannot store a dead letter on '\(subject)' (\(NATSError(status, code: code, doing: "publishing it"))); "
                                + "the message goes back and comes again: create a stream that stores '\(subject)'")
                    }
                    natsMsg_Nak(message, nil)
                    natsMsg_Destroy(message)
                    release()
                    continue
                }
            }
            natsMsg_Term(message, nil)
            natsMsg_Destroy(message)
            release()
        }
    }
}
