import Pipeline
import Postgres
import Reactive

/// What the `postgres` source and sink share: the connection parameter, opening a connection with
/// the session settings the value conversion needs, and the error a failed call becomes.
enum PostgresAccess {
    /// The `url` parameter both take.
    static let url = Parameter<String?>(
        "url",
        doc:
            "The server: a URL (postgresql://user@host:5432/db?sslmode=require) or libpq's key=value settings; without it, libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE…). A password is best given by PGPASSWORD or ~/.pgpass; it is never printed.",
        example: "postgresql://rivulet@127.0.0.1:5432/shop")

    /// The `numeric` parameter of the sources.
    static let numerics = Parameter<PostgresValues.Numerics>(
        "numeric", default: .text,
        doc:
            "How numeric (decimal) columns are read: text keeps them exact (\"12.50\"); number reads them as numbers (an integer when whole).",
        example: "number")

    /// A connection, as the component's error when it cannot be made.
    static func connect(
        _ settings: String?, replication: Bool = false, context: ComponentContext
    ) throws -> PostgresConnection {
        do {
            return try PostgresConnection(
                settings: settings ?? "", replication: replication, options: PostgresValues.sessionOptions)
        } catch {
            throw context.error("cannot connect to PostgreSQL\(describe(settings)): \(error.description)")
        }
    }

    /// The pipeline error for a failed statement.
    static func failure(_ error: PostgresError, context: ComponentContext, element: Value? = nil)
        -> PipelineRuntimeError
    {
        context.error(
            error.isTransient ? "the connection to PostgreSQL was lost: \(error.description)" : error.description,
            element: element)
    }

    /// ` at HOST:PORT/DB` for an error message: the server without its credentials.
    static func describe(_ settings: String?) -> String {
        guard let settings, !settings.isEmpty else { return " (libpq's environment)" }
        guard let scheme = settings.firstRange(of: "://") else { return "" }
        var rest = settings[scheme.upperBound...]
        if let at = rest.prefix(while: { $0 != "/" }).lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        return " at " + rest.prefix { $0 != "?" }
    }
}

extension PostgresValues.Numerics: ParameterChoice {}
