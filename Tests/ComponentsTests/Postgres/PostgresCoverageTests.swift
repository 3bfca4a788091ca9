import Pipeline
import Postgres
import RivuletTestSupport
import XCTest

@testable import Components

final class PostgresCoverageTests: LeakCheckingTestCase {
    private func lsn(_ value: UInt64) -> LogSequenceNumber { LogSequenceNumber(value) }

    /// Two transactions of two changes each, read in commit order: changes 10 and 11 committing
    /// at 20 (ending at 21), then 30 and 31 at 40 (ending at 41).
    private func twoTransactions(_ confirmations: PostgresConfirmations, _ coverage: PostgresCoverage?) -> (
        first: [PostgresChange], second: [PostgresChange]
    ) {
        func transaction(committingAt commit: UInt64) -> [PostgresChange] {
            let transaction = confirmations.begin()
            let changes = [commit - 10, commit - 9].map {
                PostgresChange(
                    slot: "s", position: lsn($0), commit: lsn(commit), transaction: transaction,
                    confirmations: confirmations, coverage: coverage)
            }
            confirmations.commit(transaction, end: lsn(commit + 1))
            return changes
        }
        let first = transaction(committingAt: 20)
        return (first, transaction(committingAt: 40))
    }

    func testWithoutCheckpointsTheSlotMovesOverEachTransactionOnceItsChangesAreDone() {
        let confirmations = PostgresConfirmations()
        var (first, second) = twoTransactions(confirmations, nil)
        second.removeAll()
        XCTAssertEqual(confirmations.confirmed, .zero)
        first.removeFirst()
        XCTAssertEqual(confirmations.confirmed, .zero, "a change of the first transaction is still on its way")
        first.removeAll()
        XCTAssertEqual(confirmations.confirmed, lsn(41))
        XCTAssertTrue(confirmations.isIdle)
    }

    func testUnderStateADoneChangeCountsOnlyOnceACheckpointHoldingItIsCommitted() {
        let confirmations = PostgresConfirmations()
        let coverage = PostgresCoverage(restoring: nil, confirmations: confirmations)
        var (first, second) = twoTransactions(confirmations, coverage)
        first.removeAll()
        XCTAssertEqual(coverage.waiting, 2)
        XCTAssertEqual(confirmations.confirmed, .zero, "done, but no checkpoint holds its effect yet")
        // The second transaction's first change is held by an operator's state at the checkpoint.
        second[0].checkpointing()
        let position = coverage.position()
        XCTAssertEqual(
            position,
            ["transactions": ["0/14": ["0/A", "0/B"], "0/28": ["0/1E"]]] as Value)
        XCTAssertEqual(confirmations.confirmed, .zero, "taken, not committed")
        coverage.committed()
        XCTAssertEqual(confirmations.confirmed, lsn(21))
        second[0].checkpointed()
        second.removeAll()
        XCTAssertEqual(confirmations.confirmed, lsn(21), "the last change is done but not yet in a checkpoint")
        // Until the server is told, a checkpoint still lists the confirmed transaction: a runner
        // killed before the telling is sent it again.
        XCTAssertEqual(
            coverage.position(), ["transactions": ["0/14": ["0/A", "0/B"], "0/28": ["0/1E", "0/1F"]]] as Value)
        confirmations.told = lsn(21)
        XCTAssertEqual(coverage.position(), ["transactions": ["0/28": ["0/1E", "0/1F"]]] as Value)
        coverage.committed()
        XCTAssertEqual(confirmations.confirmed, lsn(41))
        confirmations.told = lsn(41)
        XCTAssertEqual(coverage.position(), ["transactions": [:]] as Value)
    }

    func testARestoredPositionTellsWhichChangesReadAgainToPassOver() {
        let restored: Value = ["transactions": ["0/28": ["0/1E"]]]
        XCTAssertNil(PostgresCoverage.problem(with: restored))
        let coverage = PostgresCoverage(restoring: restored, confirmations: PostgresConfirmations())
        XCTAssertTrue(coverage.contains(commit: lsn(40), change: lsn(30)))
        XCTAssertFalse(coverage.contains(commit: lsn(40), change: lsn(31)))
        XCTAssertFalse(coverage.contains(commit: lsn(20), change: lsn(30)))
    }

    func testADamagedStoredPositionIsNamed() {
        XCTAssertEqual(PostgresCoverage.problem(with: ["floor": 1]), "has no 'transactions' object")
        XCTAssertEqual(
            PostgresCoverage.problem(with: ["transactions": ["x": []]]), "names 'x', not a log position")
        XCTAssertEqual(
            PostgresCoverage.problem(with: ["transactions": ["0/28": [1]]]),
            "lists for 0/28 something other than log positions")
        XCTAssertNil(PostgresCoverage.problem(with: .null))
    }

    func testAFailedChangeHoldsTheSlotAtItsTransaction() {
        let confirmations = PostgresConfirmations()
        let coverage = PostgresCoverage(restoring: nil, confirmations: confirmations)
        var (first, second) = twoTransactions(confirmations, coverage)
        first[1].fail(PostgresError("refused"))
        first[1].checkpointing()
        first.removeAll()
        second.removeAll()
        XCTAssertEqual(
            coverage.position(), ["transactions": ["0/14": ["0/A"], "0/28": ["0/1E", "0/1F"]]] as Value,
            "the failed change is not held: a resumed run reads it again")
        coverage.committed()
        XCTAssertEqual(confirmations.confirmed, .zero)
    }
}
