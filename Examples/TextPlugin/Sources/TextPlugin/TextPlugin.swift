import PluginAPI

/// The binary interface of the core the plugin was built against, checked by rivulet before
/// anything else.
@_cdecl("rivulet_plugin_interface")
public func rivuletPluginInterface() -> UInt64 { PluginAPI.binaryInterface }

/// Registers the plugin's operators.
@_cdecl("rivulet_plugin_register")
public func rivuletPluginRegister(_ registrar: UnsafeMutableRawPointer) -> Int32 {
    let registrar = PluginRegistrar.from(registrar)
    registrar.register(TextOperators.slugify)
    registrar.register(TextOperators.wordCount)
    registrar.register(TextOperators.countBy)
    return 0
}

/// Text operators, declared exactly as rivulet's built-ins are.
enum TextOperators {
    static let field = Parameter<String?>(
        "field", doc: "Slugify this field of an object element (default: the element itself).", example: "title")
    static let separator = Parameter<String>("separator", default: "-", doc: "What joins the words.")
    static let countedField = Parameter<String?>(
        "field", doc: "Count this field of an object element.", example: "body")
    static let countKey = Parameter<Expression>("by", doc: "The key elements are counted by.", example: ".user")

    /// `slugify` — "Hello, World!" becomes "hello-world".
    static let slugify = ComponentSpec(
        name: "slugify",
        summary: "Turns text into a URL slug: lower case, words joined by a separator.",
        docs: "Letters and digits are kept (lower-cased); every other run of characters becomes one separator.",
        parameters: [field, separator],
        primary: field,
        example: "- slugify: title",
        factory: .operator { parameters, context in
            let field = parameters[field]
            let separator = parameters[separator]
            return { source in
                source.map { element -> Value in
                    guard let field else { return .string(try slug(element, separator, context)) }
                    guard case .object(var object) = element else {
                        throw context.error("slugify of field '\(field)' needs an object", element: element)
                    }
                    object[field + "Slug"] = .string(try slug(object[field] ?? .null, separator, context))
                    return .object(object)
                }
            }
        })

    static func slug(_ value: Value, _ separator: String, _ context: ComponentContext) throws -> String {
        guard case .string(let text) = value else { throw context.error("slugify needs text", element: value) }
        var words: [String] = []
        var current = ""
        for character in text.lowercased() {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words.joined(separator: separator)
    }

    /// `wordCount` — the number of words in the text.
    static let wordCount = ComponentSpec(
        name: "wordCount",
        summary: "Counts the words of text elements (or of a field), emitting {text, words}.",
        parameters: [countedField],
        primary: countedField,
        example: "- wordCount",
        factory: .operator { parameters, context in
            let field = parameters[countedField]
            return { source in
                source.map { element -> Value in
                    let target = field.map { element[$0] ?? .null } ?? element
                    guard case .string(let text) = target else {
                        throw context.error("wordCount needs text", element: element)
                    }
                    let words = text.split(whereSeparator: { $0.isWhitespace }).count
                    return ["text": .string(text), "words": .int(words)]
                }
            }
        })

    /// `countBy: .user` — each element as `{key, count}`, the count of its key so far. It keeps a
    /// count per key and nothing else, and says so: `partitionBy` by the same key splits it.
    static let countBy = ComponentSpec(
        name: "countBy",
        summary: "Counts elements per key as they come, emitting {key, count} for each.",
        parameters: [countKey],
        primary: countKey,
        example: "- countBy: .user",
        factory: .operator { parameters, context in
            let key = parameters[countKey]
            return { source in
                Observable.deferred {
                    let scope = context.makeScope()
                    var counts: [Value: Int] = [:]
                    return source.map { element -> Value in
                        let found = try context.evaluate(key, element, in: scope)
                        counts[found, default: 0] += 1
                        return ["key": found, "count": .int(counts[found]!)]
                    }
                }
            }
        }
    ).runningOnAnyThread().declaring { traits in traits.keyed(by: countKey) }
}
