/// The header fields every response carries so a browser treats the site strictly: a
/// Content Security Policy allowing only the site's own scripts, styles and connections
/// (and images from the map's tile server), no framing by other sites, no MIME sniffing,
/// and no full URLs sent as referrers.
package enum SecurityHeaders {
    /// The fields, for a page that loads map tiles from `tileOrigins` (`https://tile.openstreetmap.org`,
    /// or `https://*.tile.example.org` for a `{s}` template); empty for none.
    package static func fields(tileOrigins: [String]) -> [String: String] {
        let images = (["'self'", "data:"] + tileOrigins).joined(separator: " ")
        return [
            "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src \(images); "
                + "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "strict-origin-when-cross-origin",
            "Cross-Origin-Opener-Policy": "same-origin",
            "Cache-Control": "no-store",
        ]
    }

    /// The origin of a tile URL template, for `img-src`: scheme and host, with a
    /// `{s}` subdomain placeholder as a wildcard. Nil for a template that is not an
    /// absolute http(s) URL.
    package static func origin(ofTemplate template: String) -> String? {
        let lower = template.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://"),
              let schemeEnd = template.range(of: "://")
        else { return nil }
        let rest = template[schemeEnd.upperBound...]
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "'" || $0 == ";" || $0 == "," }) else { return nil }
        var hostText = String(host)
        if hostText.hasPrefix("{s}.") {
            hostText = "*." + hostText.dropFirst(4)
        }
        guard !hostText.contains("{") else { return nil }
        return template[..<schemeEnd.upperBound] + hostText
    }
}
