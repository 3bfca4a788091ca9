/// Every component a pipeline can name: the built-ins and those of loaded plugins. A name is
/// unique within a kind: a source and a sink may share one (`file` reads and writes files).
@_spi(Host) public final class ComponentRegistry {
    private var specs: [String: ComponentSpec] = [:]
    private var origins: [String: String] = [:]
    /// The plugin files already loaded into this registry.
    public var loadedPlugins: Set<String> = []

    /// An empty registry.
    public init() {}

    /// A registry holding `specs`, whose names are unique (the built-in components).
    public convenience init(registering specs: [ComponentSpec]) {
        self.init()
        for spec in specs {
            do {
                try register(spec)
            } catch {
                preconditionFailure("built-in components have unique names: \(error)")
            }
        }
    }

    /// A component registered twice.
    public struct DuplicateComponent: Error, CustomStringConvertible {
        /// Its name.
        public let name: String
        /// Who registered it first.
        public let firstOrigin: String
        /// Who tried again.
        public let secondOrigin: String

        /// What happened.
        public var description: String {
            "component '\(name)' is registered by both \(firstOrigin) and \(secondOrigin)"
        }
    }

    /// Adds a component; a name already taken is an error naming both origins.
    public func register(_ spec: ComponentSpec, origin: String = "rivulet") throws(DuplicateComponent) {
        let key = Self.key(spec.name, spec.kind)
        if let first = origins[key] {
            throw DuplicateComponent(name: spec.name, firstOrigin: first, secondOrigin: origin)
        }
        specs[key] = spec
        origins[key] = origin
        sorted = nil
    }

    /// `all`, kept until a component is registered: lint asks for it at every unknown name.
    private var sorted: [ComponentSpec]?

    private static func key(_ name: String, _ kind: ComponentKind) -> String { "\(kind.rawValue) \(name)" }

    /// The component of `kind` called `name`.
    public func spec(_ name: String, kind: ComponentKind) -> ComponentSpec? { specs[Self.key(name, kind)] }

    /// The components called `name`, of any kind (sources first, then operators, then sinks).
    public func specs(named name: String) -> [ComponentSpec] {
        ComponentKind.allCases.compactMap { spec(name, kind: $0) }
    }

    /// Who registered the component of `kind` called `name` (`rivulet` or a plugin's path).
    public func origin(of name: String, kind: ComponentKind) -> String? { origins[Self.key(name, kind)] }

    /// The names of the components of `kind`, sorted.
    public func names(of kind: ComponentKind) -> [String] {
        all.filter { $0.kind == kind }.map(\.name)
    }

    /// Every component, sorted by kind then name.
    public var all: [ComponentSpec] {
        if let sorted { return sorted }
        let all = specs.values.sorted { ($0.kind.sortKey, $0.name) < ($1.kind.sortKey, $1.name) }
        sorted = all
        return all
    }
}

extension ComponentKind {
    var sortKey: Int {
        switch self {
        case .source: return 0
        case .operator: return 1
        case .sink: return 2
        }
    }

    /// `a source`, `an operator`, `a sink`.
    public var withArticle: String {
        switch self {
        case .source: return "a source"
        case .operator: return "an operator"
        case .sink: return "a sink"
        }
    }
}
