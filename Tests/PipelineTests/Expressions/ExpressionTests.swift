@_spi(Host) @_spi(Components) import Pipeline
@_spi(Components) import PipelineTesting
@_spi(Components) import Reactive
import RivuletTestSupport
import XCTest

final class ExpressionTests: LeakCheckingTestCase {
    private let scope = EvaluationScope(environment: ExpressionEnvironment(seed: 7))

    private func eval(_ text: String, _ element: Value = .null, acc: Value = .null) throws -> Value {
        scope.accumulator = acc
        return try Expression(text).evaluate(element, in: scope)
    }

    private let article: Value = [
        "headline": ["main": "Climate"], "web_url": "https://example.test/a", "items": [10, 20, 30], "stars": 2600,
        "owner": ["login": "octocat"], "name": "Rivulet",
    ]

    func testPathsAndIndexes() throws {
        XCTAssertEqual(try eval(".headline.main", article), "Climate")
        XCTAssertEqual(try eval(".items[0]", article), 10)
        XCTAssertEqual(try eval(".items[-1]", article), 30)
        XCTAssertEqual(try eval(".items[9]", article), nil)
        XCTAssertEqual(try eval(".missing.deeper", article), nil)
        XCTAssertEqual(try eval(".[\"web_url\"]", article), "https://example.test/a")
        XCTAssertEqual(try eval(".", 5), 5)
        XCTAssertEqual(try eval(".name[0]", article), "R")
    }

    /// A plain `.name` is read in place with what evaluating it gives; anything else, or an element
    /// that is no object, is left to `evaluate` (nil).
    func testAFieldIsReadInPlaceAsEvaluatingItGives() throws {
        let raw = try Array(#"{"key": "k7", "v": 1.50, "n": null}"#.utf8).withUnsafeBufferPointer {
            try JSONParser.parseOnDemand($0)
        }
        let built: Value = ["key": "k7", "v": 2]
        for source in [".key", ".v", ".n", ".missing"] {
            let expression = try Expression(source)
            for element in [raw, built] {
                XCTAssertEqual(expression.fieldValue(of: element), try expression.evaluate(element, in: scope), source)
            }
        }
        XCTAssertNil(try Expression(".key").fieldValue(of: .string("text")), "not an object: evaluate says why")
        XCTAssertNil(try Expression(".key").fieldValue(of: .null))
        XCTAssertNil(try Expression(".a.b").fieldValue(of: raw), "a path is evaluated")
        XCTAssertNil(try Expression("upper(.key)").fieldValue(of: raw))
    }

    /// A plain integer member is read in place as evaluating gives it; anything else is nil (and
    /// then evaluated).
    func testAFieldsIntegerIsReadInPlaceOnlyWhenWrittenPlainly() throws {
        let line =
            #"{"ts": 1700000000123, "neg": -5, "zero": 0, "f": 2.5, "e": 1e3, "big": 1234567890123456789, "s": "7"}"#
        let raw = try Array(line.utf8).withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) }
        for source in [".ts", ".neg", ".zero"] {
            let expression = try Expression(source)
            let integer = try XCTUnwrap(expression.fieldInteger(of: raw), source)
            XCTAssertEqual(.int(integer), try expression.evaluate(raw, in: scope), source)
        }
        for source in [".f", ".e", ".big", ".s", ".missing"] {
            XCTAssertNil(try Expression(source).fieldInteger(of: raw), "\(source): evaluated instead")
        }
        XCTAssertNil(try Expression(".ts").fieldInteger(of: ["ts": 5]), "an object built in the pipeline is evaluated")
        XCTAssertNil(try Expression(".a.b").fieldInteger(of: raw))
    }

    /// A plain `.name` says which member it reads; reading that member gives what evaluating does.
    func testAPlainFieldNamesItsMember() throws {
        XCTAssertEqual(try Expression(".v").fieldName, "v")
        for source in [".a.b", "upper(.v)", ".v + 1", "."] {
            XCTAssertNil(try Expression(source).fieldName, source)
        }
        let raw = try Array(#"{"v": 2.5, "n": null}"#.utf8).withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) }
        for source in [".v", ".n", ".missing"] {
            let expression = try Expression(source)
            let name = try XCTUnwrap(expression.fieldName)
            XCTAssertEqual(raw.objectValue?[name] ?? .null, try expression.evaluate(raw, in: scope), source)
        }
    }
    /// Text written without escapes is given as the bytes it lies in; anything else is nil (and
    /// then evaluated).
    func testAFieldsTextIsGivenInPlaceOnlyWhenWrittenWithoutEscapes() throws {
        func raw(_ text: String) throws -> Value {
            try Array(text.utf8).withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) }
        }
        let text = { (bytes: UnsafeBufferPointer<UInt8>) in String(decoding: bytes, as: UTF8.self) }
        let key = try Expression(".key")
        XCTAssertEqual(key.withFieldText(of: try raw(#"{"v": 1, "key": "k7"}"#), text), "k7")
        XCTAssertEqual(key.withFieldText(of: try raw(#"{"key": "café ☕"}"#), text), "café ☕")
        XCTAssertEqual(key.withFieldText(of: try raw(#"{"key": ""}"#), text), "")
        XCTAssertNil(key.withFieldText(of: try raw(#"{"key": "a\"b"}"#), text), "an escape: decoded first")
        // Past 16 bytes the backslash is searched with memchr, below in a loop: both ways.
        XCTAssertNil(key.withFieldText(of: try raw(#"{"key": "a text of more than sixteen\"b"}"#), text))
        XCTAssertEqual(
            key.withFieldText(of: try raw(#"{"key": "a text of more than sixteen bytes"}"#), text),
            "a text of more than sixteen bytes")
        XCTAssertNil(key.withFieldText(of: try raw(#"{"key": "sixteen bytes\"x"}"#), text))
        XCTAssertNil(key.withFieldText(of: try raw(#"{"key": 42}"#), text), "not text")
        XCTAssertNil(key.withFieldText(of: try raw(#"{"other": "x"}"#), text), "missing")
        XCTAssertNil(key.withFieldText(of: ["key": "k7"], text), "not read on demand")
        XCTAssertNil(try Expression(".a.b").withFieldText(of: try raw(#"{"a": {"b": "x"}}"#), text))
    }

    func testNestingAndLengthAreBoundedWithALocatedError() {
        XCTAssertThrowsError(
            try Expression(String(repeating: "(", count: 2000) + "1" + String(repeating: ")", count: 2000))
        ) {
            XCTAssertTrue("\($0)".contains("nested more than 256 levels deep"), "\($0)")
        }
        XCTAssertThrowsError(try Expression(String(repeating: "!", count: 500) + "true")) {
            XCTAssertTrue("\($0)".contains("nested more than 256 levels deep"), "\($0)")
        }
        XCTAssertThrowsError(try Expression(Array(repeating: "1", count: 3000).joined(separator: " + "))) {
            XCTAssertTrue("\($0)".contains("expression too long"), "\($0)")
        }
        XCTAssertNoThrow(try Expression(String(repeating: "(", count: 60) + "1" + String(repeating: ")", count: 60)))
        // A chain of operators deepens the tree too (found by fuzzing: 2,000 '+' overflowed the compiler's stack).
        XCTAssertThrowsError(try Expression(Array(repeating: "1", count: 2000).joined(separator: " + "))) {
            XCTAssertTrue("\($0)".contains("nested more than 256 levels deep"), "\($0)")
        }
        XCTAssertEqual(try eval(Array(repeating: "1", count: 200).joined(separator: " + ")), 200)
    }

    /// A path as long as the token limit allows reads as deep as it names, from a parsed object and
    /// one read on demand, after `.` or any other base (fuzzing found such a 4 KB path that took
    /// seconds when each name walked the chain again).
    func testALongPathReadsEveryLevelFromAnyBase() throws {
        let depth = 2000
        var nested: Value = "bottom"
        for _ in 0..<depth { nested = ["k": nested] }
        let path = String(repeating: ".k", count: depth)
        XCTAssertEqual(try eval(path, nested), "bottom")
        XCTAssertThrowsError(try eval(path + ".k", nested))
        XCTAssertEqual(try eval("(.)" + path, nested), "bottom")
        XCTAssertEqual(try eval(".k.k.missing.k", nested), nil)
        // JSON text nests at most 512 deep.
        var shallower: Value = "bottom"
        for _ in 0..<500 { shallower = ["k": shallower] }
        var text: [UInt8] = []
        JSONSerializer.write(shallower, to: &text)
        let onDemand = try text.withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) }
        XCTAssertEqual(try eval(String(repeating: ".k", count: 500), onDemand), "bottom")
        XCTAssertEqual(try eval(".k.k", onDemand), try eval(".k.k", shallower))
        XCTAssertThrowsError(try eval(".k.k", ["k": 5])) { error in
            XCTAssertTrue("\(error)".contains("k"), "\(error)")
        }
    }

    func testATextOrListPastTheLimitIsAnErrorOfTheElement() throws {
        // acc + acc in a scan doubled each element and reached 10 GB before anything stopped it.
        let half = Value.string(String(repeating: "x", count: ValueLimits.textBytes / 2))
        XCTAssertEqual(try eval("acc + acc", acc: half).stringValue?.utf8.count, ValueLimits.textBytes)
        XCTAssertThrowsError(try eval("acc + acc + 'y'", acc: half)) { error in
            XCTAssertTrue("\(error)".contains("more than the 64 MiB a value may hold"), "\(error)")
        }
        XCTAssertThrowsError(try eval("acc + 1", acc: .string(String(repeating: "x", count: ValueLimits.textBytes))))
        let items = Value.array(Array(repeating: 1, count: ValueLimits.listItems / 2 + 1))
        XCTAssertThrowsError(try eval("acc + acc", acc: items)) { error in
            XCTAssertTrue("\(error)".contains("items, more than the 8388608 a value may hold"), "\(error)")
        }
    }

    func testArithmeticComparisonAndLogic() throws {
        XCTAssertEqual(try eval("1 + 2 * 3"), 7)
        XCTAssertEqual(try eval("(1 + 2) * 3"), 9)
        XCTAssertEqual(try eval("7 / 2"), 3.5)
        XCTAssertEqual(try eval("8 / 2"), 4)
        XCTAssertEqual(try eval("7 % 3"), 1)
        // Integer overflow gives a double (as + - * do), never a trap.
        let minimum = Value.int(Int.min)
        XCTAssertEqual(try eval(". / -1", minimum), .double(9.223372036854775808e18))
        XCTAssertEqual(try eval(". % -1", minimum), 0)
        XCTAssertEqual(try eval("-.", minimum), .double(9.223372036854775808e18))
        XCTAssertEqual(try eval("abs(.)", minimum), .double(9.223372036854775808e18))
        XCTAssertEqual(try eval(". - 1", minimum), .double(-9.223372036854775808e18))
        XCTAssertEqual(try eval(". * 2", minimum), .double(-1.8446744073709552e19))
        XCTAssertEqual(try eval("-.stars", article), -2600)
        XCTAssertEqual(try eval(".stars >= 2500 && .name == 'Rivulet'", article), true)
        XCTAssertEqual(try eval("!(.stars > 3000) || false", article), true)
        XCTAssertEqual(try eval("1 == 1.0"), true)
        XCTAssertEqual(try eval("'a' < 'b'"), true)
        XCTAssertEqual(try eval("'x' + 1"), "x1")
        XCTAssertEqual(try eval("[1] + [2]"), [1, 2])
        XCTAssertEqual(try eval(".stars > 100 ? 'many' : 'few'", article), "many")
        XCTAssertEqual(try eval(".nothing ?? 'fallback'", article), "fallback")
        XCTAssertEqual(try eval("9223372036854775807 + 1"), .double(9_223_372_036_854_775_808))
    }

    func testInListsStringsAndObjects() throws {
        XCTAssertEqual(try eval("20 in .items", article), true)
        XCTAssertEqual(try eval("'lim' in .headline.main", article), true)
        XCTAssertEqual(try eval("'owner' in .", article), true)
        XCTAssertEqual(try eval("'nope' in .", article), false)
    }

    func testFunctions() throws {
        XCTAssertEqual(try eval("len(.)", "climate"), 7)
        XCTAssertEqual(try eval("len(.items)", article), 3)
        XCTAssertEqual(try eval("lower(.name) + upper('x')", article), "rivuletX")
        XCTAssertEqual(try eval("trim('  a b  ')"), "a b")
        XCTAssertEqual(try eval("contains(.name, 'vul')", article), true)
        XCTAssertEqual(try eval("startsWith(.web_url, 'https:')", article), true)
        XCTAssertEqual(try eval("matches(.name, '^R[a-z]+t$')", article), true)
        XCTAssertEqual(try eval("default(.none, 3)", article), 3)
        XCTAssertEqual(try eval("split('a,b,,c', ',')"), ["a", "b", "", "c"])
        XCTAssertEqual(try eval("join(.items, '-')", article), "10-20-30")
        XCTAssertEqual(try eval("replace('a-b-c', '-', '+')"), "a+b+c")
        XCTAssertEqual(try eval("round(2.5)"), 3)
        XCTAssertEqual(try eval("round(3.14159, 2)"), 3.14)
        XCTAssertEqual(try eval("int('42')"), 42)
        XCTAssertEqual(try eval("string(12) + string([1])"), "12[1]")
        XCTAssertEqual(try eval("keys(.owner)", article), ["login"])
        XCTAssertEqual(try eval("max(.items)", article), 30)
        XCTAssertEqual(try eval("min(3, 1, 2)"), 1)
        XCTAssertEqual(try eval("sum(.items)", article), 60)
        XCTAssertEqual(try eval("slice(.items, 1)", article), [20, 30])
        XCTAssertEqual(try eval("clamp(12, 0, 9)"), 9)
        XCTAssertEqual(try eval("type(.owner)", article), "object")
        XCTAssertEqual(try eval("parseJSON('{\"a\": 1}').a"), 1)
    }

    func testObjectAndListConstructionAndAccumulator() throws {
        XCTAssertEqual(
            try eval("{title: .headline.main, url: .web_url, 'n': len(.items)}", article),
            ["title": "Climate", "url": "https://example.test/a", "n": 3])
        XCTAssertEqual(try eval("[., . * 2]", 4), [4, 8])
        XCTAssertEqual(try eval("acc + .", 5, acc: 10), 15)
        XCTAssertTrue(try Expression("acc + 1").usesAccumulator)
        XCTAssertFalse(try Expression(". + 1").usesAccumulator)
    }

    func testRandomIsSeededAndNowReadsTheClock() throws {
        let first = ExpressionEnvironment(seed: 42)
        let second = ExpressionEnvironment(seed: 42)
        let expression = try Expression("random(1, 100)")
        let a = try (0..<20).map { _ in try expression.evaluate(.null, in: EvaluationScope(environment: first)) }
        let b = try (0..<20).map { _ in try expression.evaluate(.null, in: EvaluationScope(environment: second)) }
        XCTAssertEqual(a, b)
        XCTAssertTrue(a.allSatisfy { ($0.intValue ?? 0) >= 1 && ($0.intValue ?? 0) <= 100 })
        XCTAssertGreaterThan(Set(a).count, 5)
        let clocked = EvaluationScope(environment: ExpressionEnvironment(seed: 1, clock: { .milliseconds(1500) }))
        XCTAssertEqual(try Expression("now()").evaluate(.null, in: clocked), 1500)
        let dated = EvaluationScope(
            environment: ExpressionEnvironment(seed: 1, epoch: .seconds(1_764_064_800), clock: { .milliseconds(1500) }))
        XCTAssertEqual(try Expression("now()").evaluate(.null, in: dated), 1_764_064_801_500)
        XCTAssertEqual(try Expression("elapsed()").evaluate(.null, in: dated), 1500)
    }

    /// `.x OP 2` and `len(.x) OP 2` are decided in one closure; written `1 + 1` the constant
    /// takes the general path. Both give the same answer, or the same error, on every kind of value.
    func testComparingAMemberOrItsLengthWithAnIntegerAgreesWithTheGeneralPath() {
        let elements: [Value] = [
            ["x": 1], ["x": 2], ["x": 3], ["x": 2.5], ["x": "ab"], ["x": "abc"], ["x": [1, 2, 3]], ["x": ["k": 1]],
            ["x": nil], [:], ["x": true], 7, nil,
        ]
        func outcome(_ text: String, _ element: Value) -> String {
            do { return "\(try eval(text, element))" } catch { return "error: \(error)" }
        }
        for op in ["<", "<=", ">", ">="] {
            for (fast, general) in [(".x \(op) 2", ".x \(op) 1 + 1"), ("len(.x) \(op) 2", "len(.x) \(op) 1 + 1")] {
                for element in elements {
                    XCTAssertEqual(outcome(fast, element), outcome(general, element), "\(fast) on \(element)")
                }
            }
        }
        XCTAssertEqual(outcome(".x >= 2", ["x": 3]), "true")
        XCTAssertEqual(outcome("len(.x) > 2", ["x": "abc"]), "true")
        // Objects read on demand, whose integers are read from their text.
        let lines = [
            #"{"x": 2}"#, #"{"x": -3}"#, #"{"x": 2.0}"#, #"{"x": 2e0}"#, #"{"x": 12345678901234567890}"#,
            #"{"x": "2"}"#,
            #"{"x": null}"#, #"{"y": 2}"#, #"{"x": 1, "x": 3}"#,
        ]
        for line in lines {
            let onDemand = try! Array(line.utf8).withUnsafeBufferPointer { try JSONParser.parseOnDemand($0) }
            let parsed = try! JSONParser.parse(line)
            for op in ["<", "<=", ">", ">="] {
                XCTAssertEqual(outcome(".x \(op) 2", onDemand), outcome(".x \(op) 2", parsed), "\(line) \(op) 2")
            }
        }
    }

    func testRunTimeTypeErrorsSayWhatWasWrong() {
        let cases: [(String, Value, String)] = [
            ("len(.)", 3, "len() expects a string, list or object, got number 3"),
            ("lower(.)", [1], "lower() expects a string, got array [1]"),
            (". > 'a'", 3, "cannot compare number 3 > string \"a\""),
            (". + 1", true, "cannot apply '+' to bool true and number 1"),
            (".x", "s", "cannot read field 'x' of string \"s\""),
            (
                ".level", "{\"level\":1}",
                "string \"{\\\"level\\\":1}\"; the element is text that looks like JSON: read it as JSON Lines (format: jsonl)"
            ),
            ("1 / 0", nil, "division by zero"),
            ("random(5, 1)", nil, "random() expects integers lo <= hi"),
        ]
        for (text, element, message) in cases {
            XCTAssertThrowsError(try eval(text, element), text) { error in
                XCTAssertTrue("\(error)".contains(message), "\(text): \(error)")
            }
        }
    }

    func testTemplatesKeepTheTypeOfALoneExpression() throws {
        let element: Value = ["q": "climate", "events": [1, 2], "page": 3]
        scope.element = element
        XCTAssertEqual(try Template("{{ .events }}").render(in: scope), [1, 2])
        XCTAssertEqual(try Template("{{.page}}").render(in: scope), 3)
        XCTAssertEqual(try Template("q={{ .q }}&page={{ .page + 1 }}").render(in: scope), "q=climate&page=4")
        XCTAssertEqual(try Template("plain").render(in: scope), "plain")
        XCTAssertTrue(try Template("plain").isConstant)
        XCTAssertThrowsError(try Template("a {{ .q")) { XCTAssertEqual(($0 as! ExpressionSyntaxError).offset, 2) }
        XCTAssertThrowsError(try Template("ab {{ .q + }}")) {
            XCTAssertEqual(($0 as! ExpressionSyntaxError).offset, 11)
        }
    }

    func testListFunctionsEvaluateTheirExpressionPerItem() throws {
        let element: Value = [
            "items": [
                ["name": "a", "n": 1, "k": "x"], ["name": "b", "n": 3, "k": "y"], ["name": "c", "n": 2, "k": "x"],
            ],
            "n": 100,
        ]
        let cases: [(String, Value)] = [
            ("map(.items, .name)", ["a", "b", "c"]),
            ("filter(.items, .n > 1)", [["name": "b", "n": 3, "k": "y"], ["name": "c", "n": 2, "k": "x"]]),
            ("reduce(.items, 0, acc + .n)", 6),
            ("map(sort(.items, -.n), .name)", ["b", "c", "a"]),
            ("map(sort(.items, .k), .name)", ["a", "c", "b"]),
            ("sort([\"b\", 2, null, \"a\", true, 1])", [nil, true, 1, 2, "a", "b"]),
            ("unique([3, 1, 3, 2, 1])", [3, 1, 2]),
            ("map(unique(.items, .k), .name)", ["a", "b"]),
            ("keys(group(.items, .k))", ["x", "y"]),
            ("len(group(.items, .k).x)", 2),
            ("flatten([[1], [2, 3], 4])", [1, 2, 3, 4]),
            ("entries({a: 1, b: 2})", [["key": "a", "value": 1], ["key": "b", "value": 2]]),
            ("sum(map(.items, .n)) + .n", 106),
            ("map([1, 2], map([10, 20], . + 1))", [[11, 21], [11, 21]]),
            ("map([], .x)", []),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(try eval(text, element), expected, text)
        }
        XCTAssertThrowsError(try eval("map(.n, .x)", element)) { error in
            XCTAssertTrue("\(error)".contains("map() expects a list, got number 100"), "\(error)")
        }
        XCTAssertThrowsError(try Expression("map(.items)"))
    }

    func testRegularExpressionsExtractReplaceAndSplit() throws {
        let line = Value.string("GET /api/orders/42?x=1 HTTP/1.1")
        // Named groups: an object; plain groups: a list (a group that took no part is null);
        // no group: the text matched; no match: null.
        XCTAssertEqual(
            try eval(#"extract(., r'^(?<method>[A-Z]+) (?<route>/[a-z]+/[a-z]+)')"#, line),
            ["method": "GET", "route": "/api/orders"])
        XCTAssertEqual(try eval(#"extract(., r'/(\d+)(x)?')"#, line), ["42", .null])
        XCTAssertEqual(try eval(#"extract(., r'\d+')"#, line), "42")
        XCTAssertEqual(try eval(#"extract(., r'POST')"#, line), .null)
        // Every match replaced; $1 and ${name} are groups, $$ a dollar sign.
        XCTAssertEqual(try eval(#"replaceRegex(., r'/\d+(?=\?)', '/:id')"#, line), "GET /api/orders/:id?x=1 HTTP/1.1")
        XCTAssertEqual(try eval(#"replaceRegex('a1b22', r'(\d+)', '<$1>')"#, nil), "a<1>b<22>")
        XCTAssertEqual(try eval(#"replaceRegex('k=v', r'(?<k>\w)=(?<v>\w)', '${v}=${k} $$')"#, nil), "v=k $")
        XCTAssertEqual(try eval(#"splitRegex('a, b;c,,d', r'[,;] ?')"#, nil), ["a", "b", "c", "", "d"])
        // A pattern computed per element is compiled then; a bad one is an element's error.
        XCTAssertEqual(try eval(#"extract(.s, .p)"#, ["s": "ab12", "p": "[0-9]+"]), "12")
        XCTAssertThrowsError(try eval(#"extract(.s, .p)"#, ["s": "ab", "p": "("])) { error in
            XCTAssertTrue("\(error)".contains("invalid regular expression '('"), "\(error)")
        }
        XCTAssertThrowsError(try eval(#"replaceRegex('a', r'a', '$2')"#, nil)) { error in
            XCTAssertTrue("\(error)".contains("names group $2, the pattern has 0"), "\(error)")
        }
        XCTAssertThrowsError(try eval(#"extract(3, r'a')"#, nil)) { error in
            XCTAssertTrue("\(error)".contains("extract() expects a string, got number"), "\(error)")
        }
    }

    func testARawStringKeepsItsBackslashes() throws {
        XCTAssertEqual(try eval("r'\\d+\\.'", nil), "\\d+\\.")
        XCTAssertEqual(try eval("matches(., r\"^\\w+\\s\\d$\")", "ab 7"), true)
        XCTAssertEqual(try eval("matches(., r'\\d{3}')", "12"), false)
        XCTAssertThrowsError(try Expression("r'open")) { error in
            XCTAssertTrue("\(error)".contains("unterminated raw string"), "\(error)")
        }
    }
}

/// Expressions with syntax errors, each with the message and the column it must produce.
final class ExpressionSyntaxErrorTests: LeakCheckingTestCase {
    static let corpus: [(text: String, message: String, offset: Int)] = [
        ("len(. >= 3", "expected ')' to close the arguments of len()", 10),
        ("len(.) >= ", "unexpected end of the expression", 10),
        (".a = 3", "unexpected '='; compare with '=='", 3),
        (".a & .b", "unexpected '&'; did you mean '&&'?", 3),
        ("lenn(.)", "unknown function 'lenn'; did you mean 'len'?", 0),
        ("name == 'x'", "unknown name 'name'; fields of the element are written '.name'", 0),
        ("'abc", "unterminated string", 0),
        ("1 +* 2", "unexpected '*'", 3),
        (".items[0", "expected ']' to close '['", 8),
        ("{title .x}", "expected ':' after the key 'title'", 7),
        ("{1: .x}", "expected a key in an object, found number 1", 1),
        ("a ? b", "unknown name 'a'", 0),
        (". ? 1", "expected ':' in a conditional", 5),
        ("(1 + 2", "expected ')' to close '('", 6),
        ("", "empty expression", 0),
        ("len", "'len' is a function; call it as len(...)", 0),
        ("len(1, 2)", "len() takes 1 argument, got 2", 0),
        ("round()", "round() takes 1 to 2 arguments, got 0", 0),
        ("matches(., '[')", "invalid regular expression", 0),
        ("extract(., '(')", "invalid regular expression '('", 0),
        ("{...x, k: 1}", "expected a key in an object, found '.'; to merge objects write x + {k: v}", 1),
        (
            ".n | tonumber",
            "unexpected '|': expressions have no pipes (as jq's); instead of '| tonumber' call float(x) (or int(x)) on the value",
            3
        ),
        (".s |test(\"a\")", "instead of '| test' call matches(s, regex)", 3),
        (".a | .b", "unexpected '|'; did you mean '||'?", 3),
        (". #", "unexpected character '#'", 2),
        (".a.", "expected a field name after '.'", 3),
        ("1 2", "unexpected number 2 after the expression", 2),
        ("'a\\q'", "unknown escape '\\q' in a string", 2),
        ("[1, 2", "expected ']' to close the list", 5),
    ]

    func testEveryCaseGivesItsMessageAndOffset() {
        for (text, message, offset) in Self.corpus {
            do {
                _ = try Expression(text)
                XCTFail("'\(text)' compiled")
            } catch {
                XCTAssertTrue(error.message.contains(message), "'\(text)': got '\(error.message)'")
                XCTAssertEqual(error.offset, offset, "'\(text)': \(error.message)")
            }
        }
    }
}
