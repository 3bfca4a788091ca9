import RivuletTestSupport
import XCTest

@testable import Pipeline

/// `PlainObjectScan`: the one-pass scan of a plainly written object finds exactly what the
/// general loop finds, or gives the text up to it.
final class PlainObjectScanTests: LeakCheckingTestCase {
    private struct Found: Equatable {
        var members: [[UInt32]]
        var end: Int
        var spaced: Bool
    }

    /// The one-pass scan's members of `text` (its `{` after any white space), or nil.
    private func scanned(_ text: [UInt8]) -> Found? {
        text.withUnsafeBufferPointer { bytes in
            let start = JSONParser.endOfWhitespace(in: bytes, from: 0)
            guard start < bytes.count else { return nil }
            return withUnsafeTemporaryAllocation(of: RawObject.Member.self, capacity: 8) { members in
                PlainObjectScan.scan(bytes, at: start, spaced: start > 0, into: members).map { scan in
                    Found(
                        members: members[0..<scan.count].map { [$0.keyStart, $0.keyEnd, $0.valueStart, $0.valueEnd] },
                        end: scan.end, spaced: scan.spaced)
                }
            }
        }
    }

    /// The general loop's members of `text`, when it keeps them all (the object is plain); nil
    /// when it throws or does not.
    private func general(_ text: [UInt8]) -> Found? {
        text.withUnsafeBufferPointer { bytes in
            var reader = JSONParser.Reader(bytes: bytes)
            reader.skipSpace()
            guard reader.position < bytes.count else { return nil }
            let start = reader.position
            return withUnsafeTemporaryAllocation(of: RawObject.Member.self, capacity: 8) { members in
                var plain = true
                guard
                    let count = try? JSONParser.scanMembers(
                        of: bytes, from: start, with: &reader, into: members, plain: &plain), plain
                else { return nil }
                return Found(
                    members: members[0..<count].map { [$0.keyStart, $0.keyEnd, $0.valueStart, $0.valueEnd] },
                    end: reader.position, spaced: reader.spaced)
            }
        }
    }

    func testPlainObjectsAreFoundInOnePassAsTheGeneralLoopFindsThem() throws {
        let texts = [
            #"{"key": "k7919", "v": 1, "ts": 0}"#,
            #"{"key":"k","v":-12.5e+3,"ts":1700000000000}"#,
            #"  {"a":true,"b":false,"c":null,"d":0,"e":-0.0,"f":1E9}"#,
            "{\t\"a\"\n:\r\"text long enough to be read eight bytes at a time\" }",
            #"{"nested": {"x": [1, {"y": "z"}], "w": {}}, "list": [ ], "s": ""}"#,
            #"{"compact":{"x":[1,2]},"n":3}"#,
            "{}", "{ }",
        ]
        for text in texts {
            let found = try XCTUnwrap(scanned(Array(text.utf8)), text)
            XCTAssertEqual(found, general(Array(text.utf8)), text)
        }
        XCTAssertEqual(scanned(Array(#"{"a":1,"b":[2]}"#.utf8))?.spaced, false)
        XCTAssertEqual(scanned(Array(#"{"a":1,"b":[2, 3]}"#.utf8))?.spaced, true, "white space in a nested value")
    }

    func testTextThatIsNotPlainOrNotJSONIsLeftToTheGeneralLoop() {
        let texts = [
            #"{"k\"ey": 1}"#, "{\"caf\u{E9}\": 1}", #"{"v": "caf\u00e9"}"#, "{\"v\": \"\u{E9}t\u{E9}\"}",
            #"{"a": 1, "a": 2}"#, #"{"a": 01}"#, #"{"a": 1.}"#, #"{"a": 1e}"#, #"{"a": -}"#, #"{"a": .5}"#,
            #"{"a": tru}"#, #"{"a": nul}"#, #"{"a" 1}"#, #"{"a": 1 "b": 2}"#, #"{"a": 1,}"#, #"{a: 1}"#,
            #"{"a": 1"#, #"{"a": "unterminated"#, "{\"a\": \"tab\there\"}", #"{"a": [1, }"#, #"{"a": +1}"#,
        ]
        for text in texts { XCTAssertNil(scanned(Array(text.utf8)), text) }
        // Nine members: one more than the room given.
        XCTAssertNil(scanned(Array(#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}"#.utf8)))
    }

    /// Every text one byte away from a plain line (a byte changed, added or taken out, anywhere):
    /// whatever the one-pass scan finds, the general loop finds the same.
    func testEveryTextOneByteAwayFromALineIsFoundAsTheGeneralLoopFindsIt() {
        let line = Array(#"{"key": "k12345678", "v": -1.5e3, "ok": true, "n": null, "o": {"x": [1]}}"#.utf8)
        let bytes: [UInt8] = Array(#" "\:,{}[]0-9.eE+tfnx"#.utf8) + [0x09, 0x0A, 0x01, 0xC3, 0x80]
        var agreed = 0
        for index in 0...line.count {
            var variants: [[UInt8]] = []
            if index < line.count {
                var removed = line
                removed.remove(at: index)
                variants.append(removed)
                for byte in bytes {
                    var changed = line
                    changed[index] = byte
                    variants.append(changed)
                }
            }
            for byte in bytes {
                var added = line
                added.insert(byte, at: index)
                variants.append(added)
            }
            for text in variants {
                guard let found = scanned(text) else { continue }
                XCTAssertEqual(found, general(text), String(decoding: text, as: UTF8.self))
                agreed += 1
            }
        }
        XCTAssertGreaterThan(agreed, 500, "most variants are still plain JSON")
    }
}
