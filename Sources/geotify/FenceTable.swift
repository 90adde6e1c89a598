import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Fences as an aligned text table, one row a fence, sorted by device and then in the
/// order of the file: what `geotify fences list` prints for people to read. Shared
/// fences have a table of their own, whose first column says whom they are shared with.
struct FenceTable {
    /// The column titles of a device's fences.
    static let header = ["DEVICE", "IDENTIFIER", "EVENT", "LAT", "LON", "RADIUS M", "NOTE"]
    /// The column titles of shared fences.
    static let sharedHeader = ["SHARED WITH"] + header.dropFirst()

    /// The column titles.
    let header: [String]
    /// The cells of each fence, in the order of `header`.
    private(set) var rows: [[String]] = []

    /// The rows for every device's own fences in `book`. A polygon shows its
    /// representative point and "polygon" for its radius.
    init(book: FenceBook) {
        header = FenceTable.header
        for device in book.devices.keys.sorted() {
            rows += book.fences(of: device).map { FenceTable.cells(of: $0, owner: device) }
        }
    }

    /// The rows for the fences of the shared `sets`, those of every device first, then
    /// each group's by name: "every device" or "group NAME", then the fence.
    init(shared sets: [SharedFences]) {
        header = FenceTable.sharedHeader
        let sorted = sets.sorted { ($0.owner == SharedFences.everyDevice ? "" : $0.owner) < ($1.owner == SharedFences.everyDevice ? "" : $1.owner) }
        for set in sorted {
            let owner = set.owner == SharedFences.everyDevice ? "every device" : "group \(set.owner)"
            rows += set.fences.map { FenceTable.cells(of: $0, owner: owner) }
        }
    }

    /// The cells of `fence` in a row that starts with `owner`.
    private static func cells(of fence: Fence, owner: String) -> [String] {
        var radius = "polygon"
        if case .circle(_, let metres) = fence.region { radius = JSONWriter.text(of: metres) }
        return [
            owner,
            fence.identifier,
            FenceTable.eventText(FenceCodec.encode(fence)["eventType"]),
            JSONWriter.text(of: fence.region.center.latitude),
            JSONWriter.text(of: fence.region.center.longitude),
            radius,
            FenceTable.visible(fence.note),
        ]
    }

    /// The table with a header line, columns two spaces apart, ending with a newline.
    var text: String {
        FenceTable.aligned([header] + rows)
    }

    /// The groups of `book` as a table: each group's name and its devices, by name.
    static func groups(of book: FenceBook) -> String {
        aligned([["GROUP", "DEVICES"]] + book.groups.keys.sorted().map { [$0, book.groups[$0, default: []].joined(separator: ", ")] })
    }

    /// `lines` as columns two spaces apart, without trailing spaces, each line ending
    /// with a newline.
    static func aligned(_ lines: [[String]]) -> String {
        let count = lines.map(\.count).max() ?? 0
        let widths = (0..<count).map { column in lines.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return lines.map { cells in
            var line = zip(cells, widths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }
                .joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
        .joined(separator: "\n") + "\n"
    }

    /// An event type as written in the file: one name, or several joined by commas.
    static func eventText(_ json: JSON?) -> String {
        switch json {
        case .string(let name)?: name
        case .array(let names)?: names.compactMap(\.stringValue).joined(separator: ",")
        default: ""
        }
    }

    /// `text` on one line: line breaks and tabs shown as `\n`, `\r`, `\t`.
    static func visible(_ text: String) -> String {
        var line = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            default: line.unicodeScalars.append(scalar)
            }
        }
        return line
    }
}
