import Pipeline

extension HTMLImages {
    /// One `srcset` candidate.
    struct Candidate: Equatable {
        var url: String
        var width: Int?
        var density: Double?
    }

    /// Parses a `srcset` the way the HTML standard does, so URLs with commas in them survive.
    static func parseSrcset(_ text: String) -> [Candidate] {
        var candidates: [Candidate] = []
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            while index < characters.count && (characters[index].isWhitespace || characters[index] == ",") {
                index += 1
            }
            guard index < characters.count else { break }
            var url = ""
            while index < characters.count && !characters[index].isWhitespace {
                url.append(characters[index])
                index += 1
            }
            var descriptor = ""
            if url.hasSuffix(",") {
                while url.hasSuffix(",") { url.removeLast() }
            } else {
                var depth = 0
                while index < characters.count {
                    let character = characters[index]
                    if character == "(" { depth += 1 }
                    if character == ")" { depth = max(0, depth - 1) }
                    if character == "," && depth == 0 { break }
                    descriptor.append(character)
                    index += 1
                }
            }
            var candidate = Candidate(url: url)
            for token in descriptor.split(whereSeparator: \.isWhitespace) {
                if token.hasSuffix("w"), let width = Int(token.dropLast()) { candidate.width = width }
                if token.hasSuffix("x"), let density = Double(token.dropLast()) { candidate.density = density }
            }
            if !url.isEmpty { candidates.append(candidate) }
        }
        return candidates
    }

    /// The largest candidate: by width when any has one, else by density (no descriptor is 1x).
    static func largest(_ candidates: [Candidate]) -> Candidate? {
        if candidates.contains(where: { $0.width != nil }) {
            return candidates.filter { $0.width != nil }.max { $0.width! < $1.width! }
        }
        return candidates.max { ($0.density ?? 1) < ($1.density ?? 1) }
    }

    /// A `src` that only holds the place of the real image.
    static func isPlaceholder(_ url: String) -> Bool {
        if url.utf8.starts(with: "data:".utf8) || url.utf8.starts(with: "DATA:".utf8) { return true }
        // The last path segment, compared in place when it is ASCII (nearly always).
        let bytes = url.utf8
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: "/") {
            end = bytes.index(before: end)
        }
        var start = end
        while start > bytes.startIndex, bytes[bytes.index(before: start)] != UInt8(ascii: "/") {
            start = bytes.index(before: start)
        }
        let segment = bytes[start..<end]
        guard !segment.isEmpty, segment.allSatisfy({ $0 < 0x80 }) else { return slowIsPlaceholder(url) }
        let prefix = "placeholder".utf8
        // Only letters become letters when 0x20 is set, so this compares the prefix ignoring case.
        if segment.count >= prefix.count, zip(segment, prefix).allSatisfy({ $0 | 0x20 == $1 }) { return true }
        // No placeholder file name is longer than 15 bytes.
        guard segment.count <= 15 else { return false }
        let lower = String(decoding: segment.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        return placeholderFiles.contains(lower)
    }

    /// What `isPlaceholder` decides for a URL whose last segment is not plain ASCII.
    private static func slowIsPlaceholder(_ url: String) -> Bool {
        let file = (url.split(separator: "/").last.map(String.init) ?? url).lowercased()
        return placeholderFiles.contains(file) || file.hasPrefix("placeholder")
    }

    static let placeholderFiles: Set<String> = [
        "blank.gif", "spacer.gif", "pixel.gif", "transparent.gif", "1x1.gif", "lazy.gif", "blank.png", "1x1.png",
    ]

    /// `text` without the white space around it; a text starting and ending in a visible ASCII
    /// character (nearly every attribute) is returned as it is, without a scan.
    static func trimmed(_ text: String) -> String {
        guard let first = text.utf8.first, let last = text.utf8.last else { return text }
        if (0x21...0x7E).contains(first) && (0x21...0x7E).contains(last) { return text }
        return String(text.trimming(\.isWhitespace))
    }
}
