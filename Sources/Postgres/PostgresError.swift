/// An error from PostgreSQL or from libpq: the server's message with its SQLSTATE, or why the
/// connection could not be made or was lost.
public struct PostgresError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The message, one line, without libpq's trailing newline.
    public let message: String
    /// The five-character SQLSTATE of a server error; nil for a failure on the client's side.
    public let sqlState: String?
    /// Whether the connection is gone (a server restart, a network fault): the same work on a new
    /// connection may succeed.
    public let connectionLost: Bool

    /// An error with `message`.
    public init(_ message: String, sqlState: String? = nil, connectionLost: Bool = false) {
        // libpq's messages run over several lines, the later ones indented with tabs.
        self.message = message.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        self.sqlState = sqlState
        self.connectionLost = connectionLost
    }

    /// The message and its SQLSTATE.
    public var description: String {
        sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message
    }

    /// A row the table's constraints refused (SQLSTATE class 23: unique, not null, check, foreign key).
    public var isConstraintViolation: Bool { sqlState?.hasPrefix("23") == true }

    /// The server is shutting down or restarting, or refuses connections for now (class 57P, 08):
    /// worth trying again on a new connection.
    public var isTransient: Bool {
        connectionLost || sqlState?.hasPrefix("08") == true || sqlState?.hasPrefix("57P") == true
    }
}
