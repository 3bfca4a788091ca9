import Foundation
@_spi(Components) import Pipeline
@_spi(Components) import Reactive
import SQLite

/// What the `sqlite` source and sink share: the busy timeout, opening a database, the error a
/// failed call becomes, and the conversion between elements' values and SQLite's.
enum SQLiteAccess {
    /// The `busyTimeout` parameter both take.
    static let busyTimeout = Parameter<RxTimeInterval>(
        "busyTimeout", default: .seconds(5),
        doc: "How long a database locked by another program is waited for before the run fails.")

    /// The database at `path`, waiting up to `busyTimeout` for another program's lock.
    static func open(
        path: String, create: Bool, readOnly: Bool = false, busyTimeout: RxTimeInterval, context: ComponentContext
    ) throws -> SQLiteDatabase {
        do {
            return try SQLiteDatabase(
                path: path, create: create, readOnly: readOnly,
                busyTimeout: Int(busyTimeout.totalNanoseconds / 1_000_000))
        } catch {
            throw context.error("cannot open the database \(path): \(error.description)")
        }
    }

    /// The pipeline error for a failed call on the database at `path`; a lock held past the busy
    /// timeout says so.
    static func failure(
        _ error: SQLiteError, path: String, busyTimeout: RxTimeInterval, context: ComponentContext
    ) -> PipelineRuntimeError {
        guard error.isBusy else { return context.error("\(path): \(error.description)") }
        return context.error(
            "\(path) is locked by another program and stayed locked for \(DurationSyntax.format(busyTimeout)) (busyTimeout): \(error.description)"
        )
    }
}

extension SQLiteDatabase.Parameter {
    /// An element's field as an SQLite value: booleans as 1/0, objects and lists as their JSON text.
    init(_ value: Value) {
        switch value {
        case .int(let number): self = .integer(number)
        case .bool(let flag): self = .integer(flag ? 1 : 0)
        case .double(let number): self = .real(number)
        case .string(let text): self = .text(text)
        case .null: self = .null
        case .array, .object: self = .text(value.description)
        }
    }

    /// The value of a column as an element's field.
    var element: Value {
        switch self {
        case .integer(let number): .int(number)
        case .real(let number): .double(number)
        case .text(let text): .string(text)
        case .null: .null
        // JSON has no bytes: a BLOB is its base64 text.
        case .blob(let bytes): .string(Data(bytes).base64EncodedString())
        }
    }
}
