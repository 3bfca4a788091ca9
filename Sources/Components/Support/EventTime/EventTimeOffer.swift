@_spi(Components) import Pipeline
@_spi(Components) import Reactive

/// What `eventTime` offers the operator right behind it: its elements as they come, each with
/// its time in the domain's `elementTime`, instead of in time order once the watermark reaches
/// them. An operator for which the order does not matter, only each element's time and the
/// watermark (`aggregate`), takes it: then nothing waits, and only the clock follows the watermark.
final class EventTimeOffer: OperatorOffer {
    let domain: EventTimeDomain<Value>
    var isTaken = false

    init(domain: EventTimeDomain<Value>) {
        self.domain = domain
    }
}

extension EventTimeDomain<Value> {
    /// The domain of a component on event time (nil on the run clock), told that the aggregate
    /// behind `budget` holds windows on it.
    static func countWindows(of budget: AggregateBudget, in context: ComponentContext) {
        guard let domain = context.existing(EventTimeDomain<Value>.self),
            domain.clock === context.scheduler as AnyObject
        else { return }
        domain.count(budget)
    }

    /// The event-time domain of a component's clock, whose `allowedLateness` it raises to
    /// `lateness` (the component's own); an error if the component is not on event time.
    static func allowing(_ lateness: RxTimeInterval, in context: ComponentContext) throws -> EventTimeDomain<Value> {
        guard let domain = context.existing(EventTimeDomain<Value>.self),
            domain.clock === context.scheduler as AnyObject
        else {
            throw context.error(
                "\(context.componentName): allowedLateness is for an event-time stream; declare eventTime above it")
        }
        domain.allowedLateness = max(domain.allowedLateness, lateness.totalNanoseconds / 1_000_000)
        return domain
    }
}
