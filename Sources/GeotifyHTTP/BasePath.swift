/// The path prefix the site lives under behind a reverse proxy that does not strip it
/// (`/geotify` for `https://example.org/geotify/`), taken off each request's path.
///
/// The page uses only relative URLs, so it works under any prefix a proxy strips too;
/// this is for proxies that pass the prefix on. A request for the prefix without its
/// slash is redirected to it with one, so the page's relative URLs resolve inside it.
package struct BasePath: Sendable, Equatable {
    /// The prefix without a trailing slash; empty for none.
    package let prefix: String

    /// No prefix: the site is at the root.
    package static let none = BasePath(validated: "")

    private init(validated prefix: String) {
        self.prefix = prefix
    }

    /// `text` as written in the settings: `""`, `"/"`, `"/geotify"` or `"/geotify/"`.
    package init(_ text: String) throws(HTTPSettingsError) {
        var trimmed = Substring(text)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard trimmed.isEmpty || trimmed.hasPrefix("/") else {
            throw HTTPSettingsError("the base path \"\(text)\" must start with / (e.g. /geotify)")
        }
        guard !trimmed.contains(where: { $0 == "?" || $0 == "#" || $0 == " " }) else {
            throw HTTPSettingsError("the base path \"\(text)\" must be a plain path (e.g. /geotify)")
        }
        prefix = String(trimmed)
    }

    /// What to do with a request for `path`.
    package enum Resolution: Sendable, Equatable {
        /// Serve this path (the prefix taken off).
        case serve(String)
        /// Redirect to this path.
        case redirect(String)
    }

    /// `path` without the prefix; the bare prefix redirects to itself with a slash.
    package func resolve(_ path: String) -> Resolution {
        guard !prefix.isEmpty else { return .serve(path) }
        if path == prefix { return .redirect(prefix + "/") }
        if path.hasPrefix(prefix + "/") { return .serve(String(path.dropFirst(prefix.count))) }
        return .serve(path)
    }
}
