import Foundation

/// Files served as they are from one directory (Debian's Leaflet in
/// `/usr/share/javascript/leaflet`), safe against path traversal: a path with `..`, `.`,
/// hidden or empty segments, a backslash or a NUL is refused before the file system is
/// asked, a symbolic link that leads out of the directory is refused after, and a
/// directory is never listed.
package struct StaticFiles: Sendable {
    /// The directory served.
    package let directory: String
    /// The largest file served, in bytes.
    package let maximumBytes: Int

    package init(directory: String, maximumBytes: Int = 8 << 20) {
        self.directory = directory
        self.maximumBytes = maximumBytes
    }

    /// Whether `relative` (the part of the URL path below the directory) may name a file
    /// in it; the refusal says why not. Pure.
    package static func check(_ relative: String) -> HTTPResponse? {
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !relative.isEmpty, !segments.isEmpty else {
            return .refusal(.notFound, "no file named")
        }
        for segment in segments {
            if segment.isEmpty || segment.hasPrefix(".") || segment.contains("\\") || segment.contains("\0") {
                return .refusal(.notFound, "no such file")
            }
        }
        return nil
    }

    /// The file `relative`, or the refusal: 404 for anything that is not a regular file
    /// inside the directory.
    package func response(for relative: String) -> HTTPResponse {
        if let refusal = StaticFiles.check(relative) { return refusal }
        let path = directory + "/" + relative
        guard let resolved = StaticFiles.realPath(path), let root = StaticFiles.realPath(directory),
              resolved.hasPrefix(root + "/")
        else { return .refusal(.notFound, "no such file") }
        var status = stat()
        guard stat(resolved, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            return .refusal(.notFound, "no such file")
        }
        guard Int(status.st_size) <= maximumBytes, let data = FileManager.default.contents(atPath: resolved) else {
            return .refusal(.notFound, "the file cannot be served")
        }
        return HTTPResponse(
            status: 200,
            headers: ["Content-Type": StaticFiles.contentType(of: relative), "Cache-Control": "public, max-age=86400"],
            body: .held(HeldBody(count: data.count) { memory in _ = data.copyBytes(to: memory) }))
    }

    /// The media type for a file name's extension.
    package static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last?.lowercased() {
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "html": "text/html; charset=utf-8"
        case "png": "image/png"
        case "svg": "image/svg+xml"
        case "json", "map": "application/json"
        default: "application/octet-stream"
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
