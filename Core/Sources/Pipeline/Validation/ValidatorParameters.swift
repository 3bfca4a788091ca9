/// Reading parameters: each value a YAML node gives is checked against its parameter's type and
/// turned into the Swift value `ParameterValues` holds (expressions compiled, durations read).
extension Validator {
    mutating func resolveParameters(
        of spec: ComponentSpec, node: YAMLNode?, at location: SourceLocation,
        dependencies: inout [ValidatedStream.Dependency]
    ) -> ParameterValues? {
        resolveParameters(
            spec.parameters, primary: spec.primary, owner: spec.name, node: node, at: location,
            dependencies: &dependencies)
    }

    mutating func resolveParameters(
        _ parameters: [ParameterSpec], primary primaryName: String?, owner: String, node: YAMLNode?,
        at location: SourceLocation, dependencies: inout [ValidatedStream.Dependency]
    ) -> ParameterValues? {
        var values = ParameterValues()
        var ok = true
        let primary = primaryName.flatMap { name in parameters.first { $0.name == name } }
        var given: [(ParameterSpec, YAMLNode, SourceLocation)] = []
        if let node {
            if let pairs = node.pairs, mappingIsParameters(pairs, of: parameters, primary: primary) {
                for pair in pairs {
                    let key = pair.key.scalar ?? "?"
                    guard let parameter = parameters.first(where: { $0.name == key }) else {
                        reportUnknown(key, at: pair.key.location, in: node, of: owner, parameters)
                        ok = false
                        continue
                    }
                    given.append((parameter, pair.value, pair.key.location))
                }
            } else if let primary {
                given.append((primary, node, node.location))
            } else {
                let names = parameters.map(\.name)
                diagnostics.error(
                    "\(owner) takes its parameters as a mapping, not \(node.kindName)", at: node.location,
                    note: names.isEmpty
                        ? "\(owner) takes no parameters; write just '\(owner)'"
                        : "\(owner) takes: \(names.joined(separator: ", "))")
                return nil
            }
        }
        for (parameter, valueNode, _) in given {
            if !read(valueNode, as: parameter, of: owner, into: &values, dependencies: &dependencies) { ok = false }
        }
        for parameter in parameters where parameter.required && values.values[parameter.name] == nil {
            if given.contains(where: { $0.0.name == parameter.name }) { continue }
            let example = parameter.example.map { " (for example \(parameter.name): \($0))" } ?? ""
            diagnostics.error(
                "\(owner) needs parameter '\(parameter.name)'\(example)", at: location, note: parameter.doc)
            ok = false
        }
        return ok ? values : nil
    }

    /// Reads the value `node` gives `parameter` into `values`: checked against its type and its
    /// bound; false after reporting why not.
    private mutating func read(
        _ node: YAMLNode, as parameter: ParameterSpec, of owner: String, into values: inout ParameterValues,
        dependencies: inout [ValidatedStream.Dependency]
    ) -> Bool {
        if case .scalar("", .plain) = node.kind, parameter.type.rejectsEmpty {
            diagnostics.error(
                "parameter '\(parameter.name)' of \(owner) needs a value (\(parameter.type))", at: node.location)
            return false
        }
        let read = dependencies.count
        let converted = convert(
            node, to: parameter.type, name: parameter.name, owner: owner, dependencies: &dependencies)
        if parameter.isSampled {
            for index in read..<dependencies.count { dependencies[index].isSampled = true }
        }
        guard let value = converted else { return false }
        if let problem = parameter.bound?(value) {
            diagnostics.error(
                "parameter '\(parameter.name)' of \(owner) must be \(problem), got \(node.scalar ?? "\(value)")",
                at: node.location)
            return false
        }
        values.values[parameter.name] = value
        values.locations[parameter.name] = node.location
        if let items = node.items { values.itemLocations[parameter.name] = items.map(\.location) }
        return true
    }

    /// An unknown parameter `key` of `owner`: the error suggests a near name, or, for a key that
    /// looks like the rest of an expression cut by a comma in a flow mapping, says to quote it.
    private mutating func reportUnknown(
        _ key: String, at location: SourceLocation, in node: YAMLNode, of owner: String, _ parameters: [ParameterSpec]
    ) {
        let names = parameters.map(\.name)
        let looksCut =
            node.isFlowStyle
            && (key.first?.isNumber == true || !key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" })
        diagnostics.error(
            "unknown parameter '\(key)' of \(owner)\(Suggestions.didYouMean(key, in: names))", at: location,
            note: looksCut
                ? "inside { } and [ ] a comma ends a value: quote an expression that contains commas"
                : (names.isEmpty ? "\(owner) takes no parameters" : "\(owner) takes: \(names.joined(separator: ", "))"))
    }

    /// The comma note for an expression that ends too soon where a comma may have cut it.
    static func cutShortNote(_ node: YAMLNode, _ error: ExpressionSyntaxError) -> String? {
        guard let text = node.scalar,
            error.offset >= text.unicodeScalars.count || error.message.contains("end of the expression")
        else { return nil }
        return node.commaNote
    }

    /// Where offset `offset` inside a scalar's text is in the file.
    func location(in node: YAMLNode, offset: Int) -> SourceLocation {
        guard case .scalar(let text, let style) = node.kind else { return node.location }
        if style == .block {
            let before = text.unicodeScalars.prefix(offset)
            let lines = before.split(separator: "\n", omittingEmptySubsequences: false)
            return SourceLocation(
                file: node.location.file, line: node.location.line + lines.count, column: (lines.last?.count ?? 0) + 1)
        }
        return node.contentLocation.advanced(by: offset)
    }

    /// The value `node` gives a parameter of `type`, as the Swift value `ParameterValues` holds
    /// for it; nil after reporting why not.
    mutating func convert(
        _ node: YAMLNode, to type: ParameterType, name: String, owner: String,
        dependencies: inout [ValidatedStream.Dependency]
    ) -> Any? {
        switch type {
        case .string, .int, .number, .bool, .duration, .oneOf:
            return convertScalar(node, to: type, name: name, owner: owner)
        case .template, .expression:
            return convertCode(node, to: type, name: name, owner: owner)
        case .valueExpression:
            return compileValueExpression(node, name: name, owner: owner)
        case .value:
            return node.toValue()
        case .list(let element):
            var converted: [Any] = []
            var ok = true
            for item in node.items ?? [node] {
                if let value = convert(item, to: element, name: name, owner: owner, dependencies: &dependencies) {
                    converted.append(value)
                } else {
                    ok = false
                }
            }
            return ok ? converted : nil
        case .map(let element):
            return convertMap(node, of: element, name: name, owner: owner, dependencies: &dependencies)
        case .stream:
            guard let reference = node.scalar else { return typeError(node, name, owner, "a stream name") }
            if let dependency = checkStreamReference(reference, at: node.location) { dependencies.append(dependency) }
            return StreamName(reference)
        case .source:
            return convertSource(node, name: name, owner: owner, dependencies: &dependencies)
        case .operators:
            return convertOperators(node, name: name, owner: owner, dependencies: &dependencies)
        case .object(let parameters):
            guard node.pairs != nil else { return typeError(node, name, owner, "a mapping") }
            return resolveParameters(
                parameters, primary: nil, owner: "\(owner).\(name)", node: node, at: node.location,
                dependencies: &dependencies)
        }
    }

    /// Reports that `node` is not what parameter `name` of `owner` takes (`expected`); nil.
    private mutating func typeError(_ node: YAMLNode, _ name: String, _ owner: String, _ expected: String) -> Any? {
        let got: String
        if case .scalar(let text, _) = node.kind { got = "'\(text)'" } else { got = node.kindName }
        diagnostics.error("parameter '\(name)' of \(owner) must be \(expected), got \(got)", at: node.location)
        return nil
    }

    /// A text, number, flag, duration or word of a list.
    private mutating func convertScalar(_ node: YAMLNode, to type: ParameterType, name: String, owner: String) -> Any? {
        switch type {
        case .int:
            guard let text = node.scalar, case .int(let int) = YAMLNode.resolvePlain(text) else {
                return typeError(node, name, owner, "an integer")
            }
            return int
        case .number:
            guard let text = node.scalar, let number = YAMLNode.resolvePlain(text).doubleValue else {
                return typeError(node, name, owner, "a number")
            }
            return number
        case .bool:
            guard let text = node.scalar, case .bool(let bool) = YAMLNode.resolvePlain(text) else {
                return typeError(node, name, owner, "true or false")
            }
            return bool
        case .duration:
            guard let text = node.scalar else { return typeError(node, name, owner, "a duration such as 500ms") }
            guard let duration = DurationSyntax.parse(text) else {
                diagnostics.error(
                    "invalid duration '\(text)' for '\(name)' of \(owner)\(DurationSyntax.hint(for: text))",
                    at: node.location)
                return nil
            }
            return duration
        case .oneOf(let words):
            guard let text = node.scalar else {
                return typeError(node, name, owner, "one of \(words.joined(separator: ", "))")
            }
            guard words.contains(text) else {
                diagnostics.error(
                    "invalid value '\(text)' for '\(name)' of \(owner)\(Suggestions.didYouMean(text, in: words))",
                    at: node.location,
                    note: "allowed values: \(words.joined(separator: ", "))")
                return nil
            }
            return text
        default:
            guard let text = node.scalar else { return typeError(node, name, owner, "a string") }
            return text
        }
    }

    /// A template or an expression, compiled; a syntax error is reported where it is in the file.
    private mutating func convertCode(_ node: YAMLNode, to type: ParameterType, name: String, owner: String) -> Any? {
        guard case .expression = type else {
            guard let text = node.scalar else { return typeError(node, name, owner, "a string") }
            do {
                return try Template(text)
            } catch {
                diagnostics.error(
                    "invalid template in '\(name)': \(error.message)", at: location(in: node, offset: error.offset))
                return nil
            }
        }
        guard let text = node.scalar else { return typeError(node, name, owner, "an expression") }
        do {
            return try Expression(text)
        } catch {
            diagnostics.error(
                "invalid expression in '\(name)' of \(owner): \(error.message)",
                at: location(in: node, offset: error.offset), note: Self.cutShortNote(node, error))
            return nil
        }
    }

    /// A mapping whose values are each of `element`.
    private mutating func convertMap(
        _ node: YAMLNode, of element: ParameterType, name: String, owner: String,
        dependencies: inout [ValidatedStream.Dependency]
    ) -> Any? {
        guard let pairs = node.pairs else { return typeError(node, name, owner, "a mapping") }
        var converted: [(String, Any)] = []
        var ok = true
        for pair in pairs {
            if let value = convert(
                pair.value, to: element, name: "\(name).\(pair.key.scalar ?? "?")", owner: owner,
                dependencies: &dependencies)
            {
                converted.append((pair.key.scalar ?? "", value))
            } else {
                ok = false
            }
        }
        return ok ? converted : nil
    }

    /// An inner source (`flatMap`'s, say), written `{ http: { url: ... } }`, checked as a source.
    private mutating func convertSource(
        _ node: YAMLNode, name: String, owner: String, dependencies: inout [ValidatedStream.Dependency]
    ) -> Any? {
        guard let pairs = node.pairs, pairs.count == 1, let sourceName = pairs[0].key.scalar else {
            let sources = registry.names(of: .source)
            diagnostics.error(
                "parameter '\(name)' of \(owner) must be a source, written as a mapping such as { http: { url: ... } }",
                at: node.location, note: "sources: \(sources.joined(separator: ", "))")
            return nil
        }
        let use = ComponentUse(
            name: sourceName, location: pairs[0].key.location,
            parameters: {
                if case .scalar("", .plain) = pairs[0].value.kind { return nil } else { return pairs[0].value }
            }(),
            id: nil)
        guard let component = checkComponent(use, kind: .source, dependencies: &dependencies) else { return nil }
        return ParameterValues.InnerSource(
            spec: component.spec, parameters: component.parameters, location: use.location)
    }

    /// An inner chain of operators (`groupBy`'s, say), each checked as a stream's.
    private mutating func convertOperators(
        _ node: YAMLNode, name: String, owner: String, dependencies: inout [ValidatedStream.Dependency]
    ) -> Any? {
        guard let items = node.items else {
            return typeError(node, name, owner, "a list of operators, as a stream's ops")
        }
        var parser = SpecParser(file: node.location.file)
        var operators: [ValidatedComponent] = []
        var ok = true
        for item in items {
            guard let use = parser.componentUse(item, what: "operator") else {
                ok = false
                continue
            }
            if let component = checkComponent(use, kind: .operator, dependencies: &dependencies) {
                operators.append(component)
            } else {
                ok = false
            }
        }
        for diagnostic in parser.diagnostics.diagnostics { diagnostics.add(diagnostic) }
        return ok ? ParameterValues.OperatorChain(operators: operators, location: node.location) : nil
    }

    /// An expression, or a mapping/list of them, compiled into one expression building the value.
    mutating func compileValueExpression(_ node: YAMLNode, name: String, owner: String) -> Expression? {
        switch node.kind {
        case .scalar(let text, let style):
            // A quoted text with {{ }} is a template; anything else an expression.
            let isTemplate = style == .quoted && text.contains("{{")
            let code = convertCode(node, to: isTemplate ? .template : .expression, name: name, owner: owner)
            if let template = code as? Template { return Expression.template(template) }
            return code as? Expression
        case .sequence(let items):
            var elements: [Expression] = []
            var ok = true
            for item in items {
                if let expression = compileValueExpression(item, name: name, owner: owner) {
                    elements.append(expression)
                } else {
                    ok = false
                }
            }
            return ok ? Expression.array(elements) : nil
        case .mapping(let pairs):
            var members: [(String, Expression)] = []
            var ok = true
            for pair in pairs {
                let key = pair.key.scalar ?? "?"
                if let expression = compileValueExpression(pair.value, name: "\(name).\(key)", owner: owner) {
                    members.append((key, expression))
                } else {
                    ok = false
                }
            }
            return ok ? Expression.object(members) : nil
        }
    }
}

extension ParameterType {
    var rejectsEmpty: Bool {
        switch self {
        case .value, .string: return false
        default: return true
        }
    }
}

extension Expression {
    /// An expression that renders a template.
    static func template(_ template: Template) -> Expression {
        Expression(
            source: template.source, evaluator: { scope in try template.render(in: scope) }, usesAccumulator: false,
            // A template may call now() or random(); it is not run in parallel.
            isPure: false)
    }
}
