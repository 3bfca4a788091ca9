/// Which partitions a runner of a group should hold, decided by each runner alone from what the
/// lease bucket shows (the live runners and who holds what), so that every runner comes to the
/// same division without a coordinator. Pure: no I/O, no clock.
///
/// The division is fair and sticky: with `partitions` P and runners R (sorted by name), the first
/// `P % R` runners hold `P / R + 1` and the others `P / R`. A runner keeps what it holds up to its
/// share and lets go only of its surplus, so a runner joining or leaving moves the fewest
/// partitions; it takes free ones up to its share.
enum PartitionAssignment {
    /// How many of `partitions` `runner` should hold among `runners` (itself included).
    static func share(of runner: String, among runners: Set<String>, partitions: Int) -> Int {
        let sorted = runners.union([runner]).sorted()
        guard let index = sorted.firstIndex(of: runner) else { return 0 }
        return partitions / sorted.count + (index < partitions % sorted.count ? 1 : 0)
    }

    /// What `runner` does next. `owners` says who holds each partition (a partition not in it is
    /// free: never held, let go, or its lease expired). `release`: the partitions it holds beyond
    /// its share, highest first; `acquire`: free partitions to try to take up to its share, in an
    /// order that starts at a place of its own (its name's hash), so that runners taking at the
    /// same moment rarely race for the same one.
    static func next(
        runner: String, partitions: Int, runners: Set<String>, owners: [Int: String]
    ) -> (release: [Int], acquire: [Int]) {
        let share = share(of: runner, among: runners, partitions: partitions)
        let held = (0..<partitions).filter { owners[$0] == runner }
        if held.count > share { return (Array(held.sorted(by: >).prefix(held.count - share)), []) }
        let free = (0..<partitions).filter { owners[$0] == nil }
        guard !free.isEmpty, held.count < share else { return ([], []) }
        let start = Int(Array(runner.utf8).withUnsafeBufferPointer(PartitionHash.fnv1a)) % partitions
        let ordered = free.filter { $0 >= start } + free.filter { $0 < start }
        return ([], Array(ordered.prefix(share - held.count)))
    }
}
