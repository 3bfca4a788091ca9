@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

final class DisposableTests: LeakCheckingTestCase {
    func testAnonymousDisposableRunsOnce() {
        var count = 0
        let disposable = AnonymousDisposable { count += 1 }
        disposable.dispose()
        disposable.dispose()
        XCTAssertEqual(count, 1)
        XCTAssertTrue(disposable.isDisposed)
    }

    func testSingleAssignmentDisposesALateAssignment() {
        let holder = SingleAssignmentDisposable()
        holder.dispose()
        let inner = BooleanDisposable()
        holder.setDisposable(inner)
        XCTAssertTrue(inner.isDisposed)
    }

    func testSerialDisposesThePreviousAndLaterValues() {
        let serial = SerialDisposable()
        let first = BooleanDisposable()
        let second = BooleanDisposable()
        serial.disposable = first
        serial.disposable = second
        XCTAssertTrue(first.isDisposed)
        XCTAssertFalse(second.isDisposed)
        serial.dispose()
        XCTAssertTrue(second.isDisposed)
        let third = BooleanDisposable()
        serial.disposable = third
        XCTAssertTrue(third.isDisposed)
    }

    func testCompositeRemovesAndDisposesMembers() {
        let composite = CompositeDisposable()
        let a = BooleanDisposable()
        let b = BooleanDisposable()
        let keyA = composite.insert(a)!
        composite.insert(b)
        composite.remove(for: keyA)
        XCTAssertTrue(a.isDisposed)
        XCTAssertEqual(composite.count, 1)
        composite.dispose()
        XCTAssertTrue(b.isDisposed)
        let c = BooleanDisposable()
        XCTAssertNil(composite.insert(c))
        XCTAssertTrue(c.isDisposed)
    }

    func testDisposeBagDisposesOnDeinit() {
        let member = BooleanDisposable()
        do {
            let bag = DisposeBag()
            member.disposed(by: bag)
            XCTAssertFalse(member.isDisposed)
        }
        XCTAssertTrue(member.isDisposed)
    }

    func testLifetimeDisposesInOrderAndChildrenRemoveThemselves() {
        let lifetime = Lifetime()
        var order: [Int] = []
        lifetime.onDispose { order.append(1) }
        let child = lifetime.makeChild()
        child.onDispose { order.append(2) }
        lifetime.onDispose { order.append(3) }
        lifetime.dispose()
        XCTAssertEqual(order, [1, 2, 3])
        XCTAssertTrue(child.isDisposed)

        let parent = Lifetime()
        for _ in 0..<1000 { parent.makeChild().dispose() }
        XCTAssertFalse(parent.isDisposed)
        var late = false
        parent.dispose()
        parent.onDispose { late = true }
        XCTAssertTrue(late, "added after the end, disposed at once")
    }

    func testRemovedKeyDoesNotRemoveALaterResource() {
        let lifetime = Lifetime()
        let first = BooleanDisposable()
        let key = lifetime.add(first)!
        lifetime.remove(key)
        let second = BooleanDisposable()
        lifetime.add(second)
        lifetime.remove(key)
        lifetime.dispose()
        XCTAssertFalse(first.isDisposed)
        XCTAssertTrue(second.isDisposed)
    }
}
