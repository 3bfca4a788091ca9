@_spi(Host) @_spi(Components) import Pipeline

/// JSON Schemas (draft-07) of pipeline files and test files, generated from the component specs
/// of a registry (plugins' components included once loaded): what `rivulet schema` writes for
/// editors (yaml-language-server) to complete names and parameters and underline mistakes.
/// The schema is looser than `rivulet lint` where YAML cannot say more (expressions, stream
/// names, `${VAR}` in a number); it never refuses a file lint accepts.
@_spi(Host) public struct PipelineSchema {
    let registry: ComponentRegistry

    /// The schemas of `registry`'s components.
    public init(registry: ComponentRegistry) {
        self.registry = registry
    }

    private static let draft: Value = "http://json-schema.org/draft-07/schema#"
    private static let scalarText: Value = ["type": ["string", "number", "boolean"]]
    /// A value written through an environment variable (`${PORT}`), a string until it is read.
    private static let substituted: Value = ["type": "string", "pattern": "\\$\\{"]

    // MARK: Pipeline files

    /// The schema of a pipeline file.
    public func pipelineFile() -> Value {
        var definitions = JSONObject()
        definitions["source"] = components(of: .source, allowsID: false, extra: [streamReference])
        definitions["operator"] = components(of: .operator, allowsID: true, extra: [])
        definitions["ops"] = [
            "anyOf": [["type": "array", "items": ["$ref": "#/definitions/operator"]], ["type": "null"]]
        ]
        definitions["sink"] = components(of: .sink, allowsID: true, extra: [])
        definitions["sinkItem"] = sinkItems()
        definitions["stream"] = [
            "type": "object", "description": "A stream: its source, an optional eventTime and its operators.",
            "properties": [
                "source": ["$ref": "#/definitions/source"], "eventTime": eventTime(),
                "ops": ["$ref": "#/definitions/ops"],
            ],
            "required": ["source"], "additionalProperties": false,
        ]
        let properties: Value = [
            "name": ["type": "string", "description": "The pipeline's name (in logs, metrics and checkpoints)."],
            "description": ["type": "string", "description": "What the pipeline does, for people."],
            "plugins": [
                "description": "Swift plugins (.so) to load, paths relative to the file.",
                "anyOf": [["type": "string"], ["type": "array", "items": ["type": "string"]]],
            ],
            "seed": ["description": "The seed of random().", "anyOf": [["type": "integer"], Self.substituted]],
            "secrets": [
                "description": "Environment variables whose values never appear in output.",
                "type": "array", "items": ["type": "string"],
            ],
            "parallel": [
                "description": "Workers for the element-wise stretch after a JSON Lines source.",
                "anyOf": [["type": "integer", "minimum": 1], Self.substituted],
            ],
            "source": ["$ref": "#/definitions/source"],
            "eventTime": eventTime(),
            "ops": ["$ref": "#/definitions/ops"],
            "sink": ["$ref": "#/definitions/sink"],
            "sinks": ["type": "array", "items": ["$ref": "#/definitions/sinkItem"]],
            "streams": [
                "type": "object", "description": "The graph form: each stream by name.",
                "additionalProperties": ["$ref": "#/definitions/stream"],
            ],
        ]
        return [
            "$schema": Self.draft, "title": "Rivulet pipeline file",
            "description": "A pipeline: source, ops and sink (the linear form), or streams and sinks (the graph form).",
            "type": "object", "properties": properties, "additionalProperties": false,
            "definitions": .object(definitions),
        ]
    }

    /// `{ stream: NAME }`: a stream's source that is another stream.
    private var streamReference: Value {
        [
            "type": "object", "description": "Another stream of the pipeline, or a side stream (lookup.errors).",
            "properties": ["stream": ["type": "string"]], "required": ["stream"], "additionalProperties": false,
        ]
    }

    private func eventTime() -> Value {
        guard let spec = registry.all.first(where: { $0.kind == .operator && $0.traits.startsEventTime }) else {
            return ["type": "object"]
        }
        return parameters(of: spec)
    }

    /// Every component of `kind`: its name alone (when it needs no parameter) or a mapping of its
    /// name to its parameters, with `id` and `onError` beside. A mapping is checked against the
    /// component its key names (`if`/`then`, not one `anyOf` of them all), so a validator's error
    /// names the parameter that is wrong rather than saying that no component matched.
    private func components(of kind: ComponentKind, allowsID: Bool, extra: [Value]) -> Value {
        // The operator that starts event time is written as a stream's `eventTime`, not in its ops.
        let specs = registry.all.filter { $0.kind == kind && !$0.traits.startsEventTime }
        let bare = specs.filter { !$0.parameters.contains(where: \.required) }.map { Value.string($0.name) }
        var keys = specs.map { Value.string($0.name) } + ["onError"]
        if allowsID { keys.append("id") }
        var mapping: Value = [
            "type": "object", "propertyNames": ["enum": .array(keys)],
            "anyOf": .array(specs.map { ["required": [.string($0.name)]] }),
            "allOf": .array(
                specs.map { spec in
                    ["if": ["required": [.string(spec.name)]], "then": use(spec, allowsID: allowsID, stream: false)]
                }),
        ]
        // `{ stream: NAME }` as a source: another mapping form, whose key is no component's.
        if !extra.isEmpty {
            mapping = ["type": "object", "anyOf": .array([mapping] + extra)]
        }
        return ["if": ["type": "string"], "then": ["enum": .array(bare)], "else": mapping]
    }

    /// The items of `sinks:`: a sink with the stream it reads.
    private func sinkItems() -> Value {
        let specs = registry.all.filter { $0.kind == .sink }
        return ["anyOf": .array(specs.map { use($0, allowsID: true, stream: true) })]
    }

    private func use(_ spec: ComponentSpec, allowsID: Bool, stream: Bool) -> Value {
        var properties = JSONObject()
        if stream { properties["stream"] = ["type": "string", "description": "The stream this sink reads."] }
        properties[spec.name] = parameters(of: spec)
        if allowsID { properties["id"] = ["type": "string", "description": "A name for its side streams."] }
        properties["onError"] = ["enum": ["fail", "skip", "errors"]]
        let required: [Value] = stream ? ["stream", .string(spec.name)] : [.string(spec.name)]
        return [
            "type": "object", "description": .string(spec.summary), "properties": .object(properties),
            "required": .array(required), "additionalProperties": false,
        ]
    }

    /// A component's parameters: a mapping of them, its short form (the primary parameter's
    /// value alone), or nothing when none is required.
    private func parameters(of spec: ComponentSpec) -> Value {
        var mapping = JSONObject()
        for parameter in spec.parameters { mapping[parameter.name] = schema(of: parameter) }
        if spec.routesElementErrors && mapping["onError"] == nil {
            mapping["onError"] = ["enum": ["fail", "skip", "errors"]]
        }
        let required = spec.parameters.filter(\.required).map { Value.string($0.name) }
        var object = JSONObject()
        object["type"] = "object"
        object["properties"] = .object(mapping)
        object["additionalProperties"] = false
        if !required.isEmpty { object["required"] = .array(required) }
        // A mapping is the parameters unless the short form's value may itself be a mapping (an
        // expression, a source, a map of fields): then it is the parameters when any of its keys
        // is a parameter's name, as the validator decides.
        var isParameters = JSONObject()
        isParameters["type"] = "object"
        var shortForms: [Value] = []
        if let primary = spec.primary, let parameter = spec.parameters.first(where: { $0.name == primary }) {
            switch parameter.type {
            case .valueExpression, .source, .map, .value, .list:
                isParameters["anyOf"] = .array(spec.parameters.map { ["required": [.string($0.name)]] })
            default: break
            }
            shortForms.append(type(parameter.type))
        }
        if required.isEmpty { shortForms.append(["type": "null"]) }
        var schema = JSONObject()
        schema["description"] = .string(spec.summary)
        schema["if"] = .object(isParameters)
        schema["then"] = .object(object)
        schema["else"] = shortForms.isEmpty ? ["not": [:]] : ["anyOf": .array(shortForms)]
        return .object(schema)
    }

    private func schema(of parameter: ParameterSpec) -> Value {
        guard case .object(var schema) = type(parameter.type) else { return type(parameter.type) }
        schema["description"] = .string(parameter.doc)
        if let defaultValue = parameter.defaultValue { schema["default"] = defaultValue }
        return .object(schema)
    }

    private func type(_ type: ParameterType) -> Value {
        switch type {
        case .string, .template: return Self.scalarText
        case .expression: return ["type": ["string", "number", "boolean", "null"]]
        case .valueExpression, .value: return [:]
        case .int: return ["anyOf": [["type": "integer"], Self.substituted]]
        case .number: return ["anyOf": [["type": "number"], Self.substituted]]
        case .bool: return ["anyOf": [["type": "boolean"], Self.substituted]]
        case .duration: return ["type": ["string", "number"]]
        case .oneOf(let words): return ["anyOf": [["enum": .array(words.map(Value.string))], Self.substituted]]
        case .list(let item): return ["anyOf": [self.type(item), ["type": "array", "items": self.type(item)]]]
        case .stream: return ["type": "string"]
        case .source: return ["$ref": "#/definitions/source"]
        case .operators: return ["$ref": "#/definitions/ops"]
        case .map(let item): return ["type": "object", "additionalProperties": self.type(item)]
        case .object(let parameters):
            var properties = JSONObject()
            for parameter in parameters { properties[parameter.name] = schema(of: parameter) }
            var object = JSONObject()
            object["type"] = "object"
            object["properties"] = .object(properties)
            object["additionalProperties"] = false
            let required = parameters.filter(\.required).map { Value.string($0.name) }
            if !required.isEmpty { object["required"] = .array(required) }
            return .object(object)
        }
    }

    // MARK: Test files

    /// The schema of a `*.test.yaml` file.
    public func testFile() -> Value {
        let time: Value = ["type": ["string", "number"], "description": "A time on the virtual clock: 780ms, 1.5s."]
        let event: Value = [
            "type": "object",
            "properties": [
                "at": time, "next": [:], "error": ["type": "string"], "complete": ["type": "boolean"], "within": time,
            ],
            "required": ["at"], "additionalProperties": false,
        ]
        let timeline: Value = ["type": "array", "items": ["$ref": "#/definitions/event"]]
        let (http, request) = (Self.cannedExchange(time), Self.expectedRequest(time))
        let testCase: Value = [
            "type": "object",
            "properties": [
                "name": ["type": "string"],
                "inputs": [
                    "type": "object", "description": "Sources to replace, by stream ('source' in the linear form).",
                    "additionalProperties": [:],
                ],
                "http": ["type": "array", "items": http],
                "until": time, "stream": ["type": "string"], "expect": timeline,
                "expectCount": ["type": "integer"], "expectContains": [:],
                "expectMarbles": [
                    "anyOf": [
                        ["type": "string"],
                        [
                            "type": "object",
                            "properties": ["marbles": ["type": "string"], "tick": time, "values": ["type": "object"]],
                        ],
                    ]
                ],
                "seed": ["type": "integer"], "select": ["type": ["string", "number", "boolean"]],
                "expectRequests": ["type": "array", "items": request],
                "startAt": ["type": "string", "description": "The epoch of now(): RFC 3339."], "within": time,
            ],
            "additionalProperties": false,
        ]
        return [
            "$schema": Self.draft, "title": "Rivulet test file",
            "description": "Cases that run a pipeline on the virtual clock and check what it produced.",
            "type": "object",
            "properties": [
                "pipeline": ["type": "string", "description": "The pipeline file, relative to this one."],
                "tests": ["type": "array", "items": testCase],
            ],
            "required": ["pipeline", "tests"], "additionalProperties": false,
            "definitions": ["event": event],
        ]
    }

    /// A canned HTTP exchange of a test case (`http:`): the request it answers, and the answer.
    private static func cannedExchange(_ time: Value) -> Value {
        [
            "type": "object",
            "properties": [
                "request": [
                    "type": "object",
                    "properties": [
                        "method": ["type": "string"], "path": ["type": "string"],
                        "query": ["type": "object", "additionalProperties": Self.scalarText],
                    ],
                    "additionalProperties": false,
                ],
                "response": [
                    "type": "object",
                    "properties": [
                        "status": ["type": "integer"], "headers": ["type": "object"], "body": [:],
                        "bodyFile": ["type": "string"], "delay": time,
                    ],
                    "additionalProperties": false,
                ],
            ],
            "required": ["request", "response"], "additionalProperties": false,
        ]
    }

    /// A request a test case expects the pipeline to make (`expectRequests:`).
    private static func expectedRequest(_ time: Value) -> Value {
        [
            "type": "object",
            "properties": [
                "at": time, "method": ["type": "string"], "path": ["type": "string"],
                "query": ["type": "object", "additionalProperties": Self.scalarText], "queryExact": ["type": "boolean"],
                "body": [:], "cancelled": time, "answered": time, "within": time,
            ],
            "required": ["at", "path"], "additionalProperties": false,
        ]
    }
}
