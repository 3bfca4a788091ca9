import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive

extension NATSSink {
    /// How the sink connects, when it first publishes: a connection whose JetStream answers go to
    /// `answers`, and the stream the file names checked (or made with `create`), waiting for a
    /// cluster that is electing a leader as a source's consumer does.
    static func connector(
        endpoint: NATSEndpoint, subject: Template, partitioned: Bool, jetstream: Bool,
        stream: (name: String, create: Bool)?, maxInFlight: Int, answers: NATSPublishAnswers, context: ComponentContext
    ) -> () throws -> NATSConnection {
        let log = SchedulerBound({ (line: String) in context.log(line, level: .warning) })
        let name = context.componentName
        let scheduler = context.scheduler as? any ConcurrentDeliveryScheduler
        return {
            let connection: NATSConnection
            do {
                connection = try NATSConnection(
                    endpoint, name: "rivulet \(name)", publishAcks: jetstream ? answers : nil, maxPending: maxInFlight,
                    report: { line in scheduler?.enqueue { log.value("\(name): \(line)") } })
            } catch {
                throw context.error(Secrets.shared.redact("\(error)"))
            }
            if let stream, let js = connection.jetStream {
                do {
                    // A cluster electing a leader does not answer for a while: waited for as a
                    // source's consumer is.
                    let retry = JetStreamRetry(
                        lostAfter: endpoint.lostAfter, now: { context.scheduler.now },
                        report: { line in scheduler?.enqueue { log.value("\(name): \(line)") } },
                        pause: {
                            NATSWorker().pause(seconds: JetStreamRetry.pauseSeconds)
                            return false
                        })
                    _ = try retry.run {
                        try NATSStreams.ensure(
                            stream.name,
                            subjects: NATSStreams.subjects(storing: subject.source) + (partitioned ? ".*" : ""),
                            create: stream.create, replicas: 1, js: js, endpoint: endpoint.described)
                    }
                } catch {
                    connection.close()
                    throw context.error(Secrets.shared.redact("\(error)"))
                }
            }
            return connection
        }
    }
}
