extension Observable where Element: FixedWidthInteger {
    /// Emits 0 after `dueTime`, then completes; with a `period`, emits 1, 2, ... every period.
    public static func timer(
        _ dueTime: RxTimeInterval, period: RxTimeInterval? = nil, scheduler: any SchedulerType
    ) -> Observable<Element> {
        Observable { observer, lifetime in
            guard let period else {
                lifetime.add(
                    scheduler.schedule(after: dueTime) {
                        observer.on(.next(0))
                        observer.on(.completed)
                    })
                return
            }
            var counter: Element = 0
            lifetime.add(
                scheduler.schedulePeriodic(startAfter: dueTime, period: period) {
                    observer.on(.next(counter))
                    counter &+= 1
                })
        }
    }

    /// Emits 0, 1, 2, ... every `period`, starting one period after subscription.
    public static func interval(_ period: RxTimeInterval, scheduler: any SchedulerType) -> Observable<Element> {
        timer(period, period: period, scheduler: scheduler)
    }
}
