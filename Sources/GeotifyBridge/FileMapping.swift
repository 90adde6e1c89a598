/// A mapping of a file into the process, as `/proc/self/smaps` describes it: what
/// `MemoryRelease.dropStartupPages` may unmap and map again from the page cache.
package struct FileMapping: Equatable, Sendable {
    package var start: Int
    package var end: Int
    /// Resident bytes.
    package var resident: Int

    /// The mappings in `smaps` that are private, not writable, of a file, resident, and
    /// hold no page of their own (no anonymous page, such as a relocated page copied on
    /// write): dropping their pages loses nothing, as each maps again as the same bytes
    /// from the page cache. ("Dirty" pages do not matter: in smaps they are page cache
    /// pages not yet written back, as in a binary just copied, still the file's bytes.) A
    /// mapping whose description is incomplete is left out.
    package static func clean(in smaps: String) -> [FileMapping] {
        var found: [FileMapping] = []
        var current: (mapping: FileMapping, eligible: Bool, anonymous: Int?)?
        func finish() {
            if let current, current.eligible, current.anonymous == 0, current.mapping.resident > 0 {
                found.append(current.mapping)
            }
        }
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":"), fields.count >= 5 {
                finish()
                let bounds = range.split(separator: "-")
                guard bounds.count == 2, let start = Int(bounds[0], radix: 16), let end = Int(bounds[1], radix: 16), start < end else {
                    current = nil
                    continue
                }
                let permissions = Array(fields[1].utf8)
                let eligible = permissions.count == 4 && permissions[1] == UInt8(ascii: "-") && permissions[3] == UInt8(ascii: "p")
                    && fields[4] != "0" && fields.count >= 6 && fields[5].hasPrefix("/")
                current = (FileMapping(start: start, end: end, resident: 0), eligible, nil)
                continue
            }
            guard current != nil, fields.count >= 2, let kilobytes = Int(fields[1]) else { continue }
            switch fields[0] {
            case "Rss:": current?.mapping.resident = kilobytes * 1_024
            case "Anonymous:": current?.anonymous = kilobytes
            default: break
            }
        }
        finish()
        return found
    }
}
