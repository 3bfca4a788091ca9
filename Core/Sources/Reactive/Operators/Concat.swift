extension Observable {
    /// Each source in turn: the next is subscribed in the tick the one before completes (RxSwift's
    /// `concat`). An error ends the result at once; with no sources it completes at once.
    @inlinable
    public static func concat(_ sources: [Observable<Element>]) -> Observable<Element> {
        Observable<Observable<Element>>.from(sources).concatMap { $0 }
    }
}

extension ObservableType {
    /// This sequence, then `other` once it has completed; see `Observable.concat`.
    @inlinable
    public func concat<Other: ObservableType>(_ other: Other) -> Observable<Element> where Other.Element == Element {
        Observable.concat([asObservable(), other.asObservable()])
    }
}
