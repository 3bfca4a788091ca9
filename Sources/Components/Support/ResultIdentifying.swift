/// An origin that gives each result written for it an id of its own, the same ids again when its
/// message is delivered again: what lets a sink write a redelivered message's results once.
protocol ResultIdentifying: AnyObject {
    /// The id of the next result of this origin (`NAME:POSITION`, then `:2`, `:3`…); nil when it
    /// has none.
    func nextResultID() -> String?
}
