import Reactive

/// An error while a pipeline runs, naming the component and where it is in the file.
public struct PipelineRuntimeError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// The component it happened in.
    public var component: String
    /// Where that component is in the pipeline file.
    public var location: SourceLocation
    /// The element being processed, if any.
    public var element: Value?

    /// An error in `component` at `location`.
    @_spi(Components) public init(_ message: String, component: String, location: SourceLocation, element: Value? = nil)
    {
        self.message = message
        self.component = component
        self.location = location
        self.element = element
    }

    /// `file:line:col: error: component: message (element: ...)`.
    public var description: String {
        var text = "\(location): error: \(component): \(message)"
        if let element {
            var rendered = element.description
            if rendered.count > 200 { rendered = String(rendered.prefix(197)) + "..." }
            text += " (element: \(rendered))"
        }
        return text
    }
}
