import Foundation

/// Turns the references a page's images make into absolute http(s) URLs against its base, in
/// order, without duplicates, up to the limit; `data:` URLs only when asked for.
struct ImageResolver {
    let base: URL?
    let options: HTMLImages.Options
    private(set) var found: [FoundImage] = []
    private var seen: Set<String> = []

    init(base: URL?, options: HTMLImages.Options, expected: Int) {
        self.base = base
        self.options = options
        seen.reserveCapacity(expected)
        found.reserveCapacity(min(expected, options.limit ?? expected))
    }

    var isFull: Bool { options.limit.map { found.count >= $0 } ?? false }

    /// The base's text up to its last `/`, when joining a plain relative path to it is all that
    /// resolving that path does (an http(s) base with no dot segment, query or fragment).
    private lazy var baseDirectory: String? = {
        guard let text = base?.absoluteString, let scheme = base?.scheme?.lowercased(),
            scheme == "http" || scheme == "https", !text.contains("/./"), !text.contains("/../"),
            !text.contains("?"), !text.contains("#"),
            let slash = text.lastIndex(of: "/"), text[..<slash].hasSuffix("/") == false,
            text.distance(from: text.startIndex, to: slash) > scheme.count + 3
        else { return nil }
        return String(text[...slash])
    }()

    /// Whether `reference` is a plain relative path (`img/a-1.png`): letters, digits and
    /// `-._~/`, no leading `/` or `.`, no dot segment, which resolves by joining.
    static func isPlainRelativePath(_ reference: String) -> Bool {
        var previous: UInt8 = UInt8(ascii: "/")
        for byte in reference.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
                break
            case UInt8(ascii: "."): if previous == UInt8(ascii: "/") { return false }
            case UInt8(ascii: "/"): if previous == UInt8(ascii: "/") { return false }
            default: return false
            }
            previous = byte
        }
        return !reference.isEmpty
    }

    mutating func add(_ reference: String, alt: String?, width: Int?, height: Int?) {
        guard !isFull else { return }
        // The common case, `src="img/x.png"`, joined to the base without a URL parser.
        if Self.isPlainRelativePath(reference), let baseDirectory {
            let resolved = baseDirectory + reference
            guard seen.insert(resolved).inserted else { return }
            found.append(FoundImage(url: resolved, alt: alt, width: width, height: height))
            return
        }
        let lower = reference.lowercased()
        if lower.hasPrefix("javascript:") { return }
        var resolved: String
        if lower.hasPrefix("data:") {
            guard options.includeData else { return }
            resolved = reference
        } else {
            guard let url = URL(string: reference, relativeTo: base)?.absoluteURL,
                let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
            else { return }
            resolved = url.absoluteString
        }
        if resolved.hasSuffix("#") { resolved.removeLast() }
        guard seen.insert(resolved).inserted else { return }
        found.append(FoundImage(url: resolved, alt: alt, width: width, height: height))
    }
}
