import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Fences as an aligned text table, one row a fence, sorted by device and then in the
/// order of the file: what `geotify fences list` prints for people to read.
struct FenceTable {
    /// The column titles.
    static let header = ["DEVICE", "IDENTIFIER", "EVENT", "LAT", "LON", "RADIUS M", "NOTE"]

    /// The cells of each fence, in the order of `header`.
    private(set) var rows: [[String]] = []

    /// The rows for every fence of `book`. A polygon shows its representative point
    /// and "polygon" for its radius.
    init(book: FenceBook) {
        for device in book.devices.keys.sorted() {
            for fence in book.fences(of: device) {
                var radius = "polygon"
                if case .circle(_, let metres) = fence.region { radius = JSONWriter.text(of: metres) }
                rows.append([
                    device,
                    fence.identifier,
                    FenceTable.eventText(FenceCodec.encode(fence)["eventType"]),
                    JSONWriter.text(of: fence.region.center.latitude),
                    JSONWriter.text(of: fence.region.center.longitude),
                    radius,
                    FenceTable.visible(fence.note),
                ])
            }
        }
    }

    /// The table with a header line, columns two spaces apart, ending with a newline.
    var text: String {
        let lines = [FenceTable.header] + rows
        let widths = FenceTable.header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
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
