import Components
@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import Reactive
import RivuletTestSupport
@_spi(Host) import Tooling
import XCTest

/// The component reference: every source and sink states its delivery guarantee, and the
/// reference shows it beside the checkpoint line.
final class ComponentReferenceTests: LeakCheckingTestCase {
    func testEverySourceAndSinkStatesItsDeliveryGuarantee() {
        let registry = ComponentRegistry(registering: BuiltinComponents.all)
        for spec in registry.all {
            if spec.kind == .operator {
                XCTAssertNil(spec.delivery, "\(spec.name): an operator carries what its source and sink promise")
            } else {
                XCTAssertNotNil(spec.delivery, "\(spec.kind) \(spec.name) states no delivery guarantee")
                XCTAssertFalse(spec.delivery?.detail.isEmpty ?? true, spec.name)
            }
        }
    }

    func testTheReferenceShowsTheGuarantee() throws {
        let reference = ComponentReference(registry: ComponentRegistry(registering: BuiltinComponents.all))
        let nats = try XCTUnwrap(
            ComponentRegistry(registering: BuiltinComponents.all).all.first { $0.name == "nats" && $0.kind == .sink })
        let markdown = reference.markdown(nats)
        assertContains(markdown, "Delivery: at-least-once: JetStream publishes wait")
        XCTAssertEqual(Delivery(.exactlyOnce, "per key").summary, "exactly-once: per key")
    }
}
