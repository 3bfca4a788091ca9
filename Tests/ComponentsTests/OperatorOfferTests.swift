@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

/// What an operator offers the next one (`ComponentContext.handOn`, `offered(_:)`): the operator
/// built right after it sees the offer, of the kind it asks for; one further on does not; the
/// offering operator learns whether it was taken.
final class OperatorOfferTests: LeakCheckingTestCase {
    private final class Tag: OperatorOffer {
        let text: String
        var isTaken = false
        init(_ text: String) { self.text = text }
    }

    private final class OtherKind: OperatorOffer {
        var isTaken = false
    }

    /// `offerTag`: offers a Tag; `takeTag`: labels each element with the Tag it was offered (or
    /// "none"); `offerOther`: offers something of another kind.
    private func harness(seen: @escaping (Tag) -> Void) -> PipelineHarness {
        let harness = PipelineHarness()
        let offer = ComponentSpec(
            name: "offerTag", summary: "Offers a tag.", parameters: [], example: "- offerTag",
            factory: .operator { _, context in
                let tag = Tag("from offer")
                context.handOn = tag
                seen(tag)
                return { $0 }
            })
        let other = ComponentSpec(
            name: "offerOther", summary: "Offers another kind.", parameters: [], example: "- offerOther",
            factory: .operator { _, context in
                context.handOn = OtherKind()
                return { $0 }
            })
        let take = ComponentSpec(
            name: "takeTag", summary: "Takes a tag.", parameters: [], example: "- takeTag",
            factory: .operator { _, context in
                let tag = context.offered(Tag.self)
                tag?.isTaken = true
                let label = Value.string(tag?.text ?? "none")
                return { $0.map { _ in label } }
            })
        harness.extraComponents = [offer, other, take]
        return harness
    }

    private func labels(_ ops: String) throws -> (labels: [Value], tags: [Tag]) {
        var tags: [Tag] = []
        let harness = harness { tags.append($0) }
        try harness.run(
            "source: { events: [{ at: 0ms, next: 1 }, { at: 10ms, complete: true }] }\nops: \(ops)\nsink: record\n")
        return (harness.recorders["out"]?.values ?? [], tags)
    }

    func testTheNextOperatorTakesWhatTheOneBeforeOffered() throws {
        let (labels, tags) = try labels("[offerTag, takeTag]")
        XCTAssertEqual(labels, ["from offer"])
        XCTAssertEqual(tags.map(\.isTaken), [true])
    }

    func testAnOfferReachesOnlyTheOperatorRightAfterIt() throws {
        let (labels, tags) = try labels("[offerTag, { map: . }, takeTag]")
        XCTAssertEqual(labels, ["none"])
        XCTAssertEqual(tags.map(\.isTaken), [false])
    }

    func testAnOfferOfAnotherKindIsNotTaken() throws {
        let (labels, _) = try labels("[offerOther, takeTag]")
        XCTAssertEqual(labels, ["none"])
    }
}
