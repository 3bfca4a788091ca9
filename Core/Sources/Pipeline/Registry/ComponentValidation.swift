#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a component's `validate` step reports problems: each at the value it is about (or at
/// the component when no single value is), with the pipeline's directory for checking paths.
public final class ComponentValidation {
    /// The directory of the pipeline file, against which relative paths are resolved.
    @_spi(Components) public let baseDirectory: String
    /// Where the component is written.
    @_spi(Components) public let location: SourceLocation
    let owner: String
    private(set) var diagnostics: [Diagnostic] = []

    init(owner: String, location: SourceLocation, baseDirectory: String) {
        self.owner = owner
        self.location = location
        self.baseDirectory = baseDirectory
    }

    /// Reports a problem at `parameter`'s value in `values` (at the component when not given), or
    /// at its item number `item` (from 0) when the value is a list.
    public func error(
        _ message: String, at parameter: (any ParameterDeclaration)? = nil, item: Int? = nil,
        in values: ParameterValues, note: String? = nil
    ) {
        let itemPlace = parameter.flatMap { parameter in
            item.flatMap { index in values.itemLocations[parameter.spec.name]?.dropFirst(index).first }
        }
        let place = itemPlace ?? parameter.flatMap { values.locations[$0.spec.name] } ?? location
        diagnostics.append(.error("\(owner): \(message)", at: place, note: note))
    }

    /// Reports something to look at (the pipeline still runs) at `parameter`'s value in `values`.
    public func warning(
        _ message: String, at parameter: (any ParameterDeclaration)? = nil, in values: ParameterValues,
        note: String? = nil
    ) {
        let place = parameter.flatMap { values.locations[$0.spec.name] } ?? location
        diagnostics.append(.warning("\(owner): \(message)", at: place, note: note))
    }

    /// `path` resolved against the pipeline's directory (absolute paths are kept).
    public func resolvePath(_ path: String) -> String {
        Validator.resolve(path, against: baseDirectory)
    }

    /// Whether a file or directory exists at `path` (resolved against the pipeline's directory).
    public func fileExists(_ path: String) -> Bool {
        access(resolvePath(path), F_OK) == 0
    }

    /// Reports an error unless exactly one of the two parameters is given.
    public func requireExactlyOne(
        _ first: any ParameterDeclaration, _ second: any ParameterDeclaration, in values: ParameterValues
    ) {
        switch (values.has(first), values.has(second)) {
        case (false, false): error("give '\(first.spec.name)' or '\(second.spec.name)'", in: values)
        case (true, true):
            error("give '\(first.spec.name)' or '\(second.spec.name)', not both", at: second, in: values)
        default: break
        }
    }
}
