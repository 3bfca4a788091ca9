import Components
import Foundation
@_spi(Host) import Pipeline
import RivuletTestSupport
@_spi(Host) import Tooling
import XCTest

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The drawing of `rivulet graph --format svg` (and of the live view): every example pipeline's
/// SVG is well-formed XML with a node per component, its boxes never overlap, and what it shows
/// is escaped.
final class GraphLayoutTests: LeakCheckingTestCase {
    private func graph(_ text: String, file: String = "p.yaml") throws -> PipelineGraph {
        let loader = PipelineLoader(registry: ComponentRegistry(registering: BuiltinComponents.all), environment: [:])
        let loaded = loader.load(text: text, path: file)
        let pipeline = try XCTUnwrap(loaded.pipeline, "\(loaded.diagnostics)")
        return PipelineGraph(pipeline)
    }

    private func isWellFormed(_ svg: String) -> Bool {
        XMLParser(data: Data(svg.utf8)).parse()
    }

    func testEveryExamplePipelineDrawsWellFormedWithoutOverlaps() throws {
        let folder = ExamplePipelineTests.pipelines
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".yaml") && !$0.hasSuffix(".test.yaml") }.sorted()
        XCTAssertGreaterThan(names.count, 10)
        let loader = PipelineLoader(registry: ComponentRegistry(registering: BuiltinComponents.all), environment: [:])
        for name in names {
            let loaded = loader.load(path: folder.appendingPathComponent(name).path)
            let pipeline = try XCTUnwrap(loaded.pipeline, name)
            let graph = PipelineGraph(pipeline)
            let layout = graph.layout
            let boxes = Array(layout.boxes)
            XCTAssertEqual(boxes.count, graph.places.count, name)
            for (index, (id, box)) in boxes.enumerated() {
                XCTAssertGreaterThanOrEqual(box.x, 0, name)
                XCTAssertLessThanOrEqual(box.x + box.width, layout.width, "\(name): \(id) fits the drawing")
                XCTAssertLessThanOrEqual(box.y + box.height, layout.height, "\(name): \(id) fits the drawing")
                for (other, otherBox) in boxes[(index + 1)...] {
                    XCTAssertFalse(box.overlaps(otherBox), "\(name): \(id) overlaps \(other)")
                }
            }
            let svg = graph.svg(title: name)
            XCTAssertTrue(isWellFormed(svg), "\(name):\n\(svg)")
            XCTAssertEqual(svg.components(separatedBy: "<g class=\"node\"").count - 1, graph.places.count, name)
            for place in graph.places.values {
                XCTAssertTrue(svg.contains("data-place=\"\(place)\""), "\(name): \(place)")
            }
        }
    }

    func testColumnsFollowTheEdgesAndAFanOutStacksWithoutOverlap() throws {
        let graph = try graph(
            """
            streams:
              words:
                source: { events: [{ at: 0ms, next: a }] }
                ops:
                  - map: upper(.)
              lengths:
                source: { stream: words }
                ops:
                  - map: len(.)
            sinks:
              - { stream: words, stdout: {} }
              - { stream: lengths, stdout: {} }
              - { stream: words, file: { path: out.txt } }
            """)
        let layout = graph.layout
        let column = { (place: String) in layout.columns[graph.places.first { $0.value == place }!.key]! }
        XCTAssertEqual(column("streams.words.source"), 0)
        XCTAssertEqual(column("streams.words.ops.0"), 1)
        XCTAssertEqual(column("streams.lengths.ops.0"), 2)
        XCTAssertEqual(column("sinks.0"), 2)
        XCTAssertEqual(column("sinks.1"), 3)
        let boxes = Array(layout.boxes.values)
        for (index, box) in boxes.enumerated() {
            for other in boxes[(index + 1)...] { XCTAssertFalse(box.overlaps(other)) }
        }
        // Boxes that touch do not overlap; boxes that share an area do.
        let box = GraphLayout.Box(x: 0, y: 0, width: 10, height: 10)
        XCTAssertFalse(box.overlaps(GraphLayout.Box(x: 10, y: 0, width: 10, height: 10)))
        XCTAssertTrue(box.overlaps(GraphLayout.Box(x: 9, y: 9, width: 10, height: 10)))
    }

    func testWhatTheDrawingShowsIsEscaped() throws {
        let graph = try graph(
            """
            source: { events: [{ at: 0ms, next: a }] }
            ops:
              - filter: '. != "<script>alert(1)</script>" && . != "a&b"'
            sink: stdout
            """)
        let svg = graph.svg(title: "<b>title</b>")
        XCTAssertTrue(isWellFormed(svg), svg)
        XCTAssertFalse(svg.contains("<script"), svg)
        XCTAssertFalse(svg.contains("<b>"), svg)
        assertContains(svg, "&lt;script&gt;", "&amp;&amp;")
    }
}
