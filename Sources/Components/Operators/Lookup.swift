import Pipeline
import Reactive

private enum WhenMissing: String, ParameterChoice {
    case null, drop, error
}
private enum Key {
    static let path = Parameter<String>(
        "path",
        doc:
            "The table's file, relative to the pipeline file: CSV with a header (.csv), a SQLite database (.db, .sqlite, .sqlite3; give table), or JSON Lines of objects (anything else).",
        example: "owners.csv")
    static let key = Parameter<String>(
        "key", doc: "The column the table is keyed by (each row's value there finds it).", example: "route")
    static let by = Parameter<Expression>(
        "by", doc: "What each element is looked up by: compared as text with the key column.", example: ".route")
    static let into = Parameter<String?>(
        "as",
        doc:
            "The field the row is put in (null when none matches). Without it, the row's columns are added to the element, replacing fields of the same name.",
        example: "owner")
    static let missing = Parameter<WhenMissing>(
        "missing", default: .null,
        doc:
            "No row has the key: null (the element goes on, with null in 'as' or nothing added), drop it, or error (handled as onError says)."
    )
    static let table = Parameter<String?>("table", doc: "For a SQLite file: the table to read.", example: "owners")
    static let reload = Parameter<RxTimeInterval>(
        "reload", default: .seconds(1),
        doc: "How often the file is checked for a change (on the pipeline's clock); a changed file is read again."
    ).atLeast(RxTimeInterval.clockResolution)
    static let numbers = CSVParameters.numbers
    static let separator = CSVParameters.separator
}

extension BuiltinComponents {
    /// `lookup: {path: FILE, key: COLUMN, by: EXPR, as: FIELD}` — joins each element with a row of a table.
    public static let lookup = ComponentSpec(
        name: "lookup",
        summary: "Adds to each element the row of a table (CSV, JSON Lines or SQLite) that its key finds.",
        docs: """
            Vector's enrichment tables and Redpanda Connect's caches, as an operator: the file is read \
            whole when the pipeline starts, keyed by the column `key`; each element's `by` is looked up \
            (as text: 42 finds "42") and the row put in `as`, or its columns added to the element. The \
            file is checked every `reload` and read again when it changed (a rename over it, an edit); \
            a new version that cannot be read keeps the table read before, with a warning. A missing \
            file, or one without the key column, is an error before anything runs. Rows with the same \
            key: the last one wins. The table is held in memory.
            """,
        parameters: [
            Key.path, Key.key, Key.by, Key.into, Key.missing, Key.table, Key.reload, Key.numbers, Key.separator,
        ],
        primary: Key.path,
        example: "- lookup: { path: owners.csv, key: route, by: .route, as: owner }",
        validate: { values, validation in
            let path = values[Key.path]
            let isSQLite = LookupTable.Kind(path: path) == .sqlite
            if isSQLite && !values.has(Key.table) {
                return validation.error("'\(path)' is a SQLite file: say which table to read with 'table'", in: values)
            } else if !isSQLite && values.has(Key.table) {
                return validation.error("'table' is for a SQLite file; '\(path)' is not one", at: Key.table, in: values)
            }
            CSVParameters.check(values, validation)
            guard validation.fileExists(path) else {
                return validation.error("the table '\(path)' does not exist", at: Key.path, in: values)
            }
            // The table is read as the run would read it, so a missing key column or a malformed
            // line is found before anything runs.
            do {
                _ = try LookupTable.read(
                    path: validation.resolvePath(path), key: values[Key.key], sqliteTable: values[Key.table],
                    csv: CSVParameters.records(values, header: true))
            } catch let error as LookupTable.Unreadable {
                let place: any ParameterDeclaration =
                    error.description.contains("to key the table by") ? Key.key : Key.path
                validation.error(error.description, at: place, in: values)
            } catch {
                validation.error("\(error)", at: Key.path, in: values)
            }
        },
        checkpointing: .stateless,
        elementErrors: true,
        factory: .elementwise { parameters, context in
            let csv = CSVParameters.records(parameters, header: true)
            let file: LookupFile
            do {
                file = try LookupFile(
                    path: context.resolvePath(parameters[Key.path]), key: parameters[Key.key],
                    sqliteTable: parameters[Key.table], csv: csv)
            } catch {
                throw context.error("\(error)")
            }
            let by = parameters[Key.by]
            let into = parameters[Key.into]
            let missing = parameters[Key.missing]
            let reload = parameters[Key.reload]
            let scheduler = context.scheduler
            return {
                let scope = context.makeScope()
                var table = file.table
                var checked = scheduler.now
                return { element in
                    let now = scheduler.now
                    if now - checked >= reload {
                        checked = now
                        table = file.refresh { context.log($0, level: .warning) }
                    }
                    guard let key = try context.handling(element, { try context.evaluate(by, element, in: scope) })
                    else { return nil }
                    let row = table.rows[LookupTable.keyText(key)]
                    if row == nil {
                        switch missing {
                        case .null: break
                        case .drop: return nil
                        case .error:
                            let failure = context.error(
                                "no row of '\(file.path)' has \(key) in its key column", element: element)
                            guard try context.handling(element, { () throws -> Bool in throw failure }) != nil else {
                                return nil
                            }
                        }
                    }
                    guard case .object(var object) = element else {
                        throw context.error("lookup adds to an object; the element is \(element)", element: element)
                    }
                    if let into {
                        object[into] = row ?? .null
                    } else if case .object(let columns)? = row {
                        for (name, value) in columns { object[name] = value }
                    }
                    return .object(object)
                }
            }
        })
}
