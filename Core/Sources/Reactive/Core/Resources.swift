#if DEBUG
    import Synchronization
#endif

/// Live sinks and disposables, counted in debug builds as RxSwift's `Resources.total` counts
/// them: each adds one when made and removes it when freed. The runtime holds `self` strongly
/// and relies on disposal to break the cycles, so a test that ends with more than it began with
/// has found a subscription that was never released. Release builds count nothing.
public enum Resources {
    #if DEBUG
        @usableFromInline
        static let counter = Atomic<Int>(0)
    #endif

    /// How many sinks and disposables are alive (always 0 in release builds).
    @_spi(Components) public static var total: Int {
        #if DEBUG
            return counter.load(ordering: .relaxed)
        #else
            return 0
        #endif
    }

    /// Whether this build counts (debug builds do).
    @_spi(Components) public static var isCounting: Bool {
        #if DEBUG
            return true
        #else
            return false
        #endif
    }

    /// Records that a sink or disposable was made.
    @inlinable
    static func made() {
        #if DEBUG
            counter.wrappingAdd(1, ordering: .relaxed)
        #endif
    }

    /// Records that a sink or disposable was freed.
    @inlinable
    static func freed() {
        #if DEBUG
            counter.wrappingSubtract(1, ordering: .relaxed)
        #endif
    }
}
