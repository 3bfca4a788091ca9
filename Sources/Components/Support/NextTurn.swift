import Pipeline
import Reactive

extension Observable where Element == Value {
    /// This source, subscribed at the next turn of `scheduler` rather than while the pipeline
    /// subscribes: a source that reads a whole file when subscribed (a `file` read to its end, an
    /// unpaced `fixture`) then delivers it once every operator after it is subscribed, as standard
    /// input's lines come. (A `sample` subscribes its ticks once its source has returned: it saw a
    /// whole file before its first tick could be armed, so a file and standard input gave two
    /// answers.)
    func subscribedAtNextTurn(on scheduler: any SchedulerType) -> Observable<Value> {
        Observable { observer, lifetime in
            lifetime.add(
                scheduler.schedule {
                    guard !lifetime.isDisposed else { return }
                    self.subscribe(observer, in: lifetime.makeChild())
                })
        }
    }
}
