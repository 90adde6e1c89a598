import GeotifyCore
import GeotifyJSON

/// The fence file's text for a book (`FenceFile.contents(of:)`), made device by device,
/// remembering each device's text: a write after a command changed one device's fences
/// encodes that device again and copies the others' text. Encoding every fence of a
/// large file on each command's write cost more than the rest of the write.
///
/// The text is byte for byte what `JSONWriter(pretty: true, sortedKeys: true)` makes of
/// the whole file as one JSON value; a device's remembered text is used only while its
/// fences are equal to those it was made from.
public struct FenceFileText: Sendable {
    private struct Entry: Sendable {
        var fences: [Fence]
        /// `"<device>": [<fences>]`, as it goes into the file.
        var text: [UInt8]
    }

    private var devices: [String: Entry] = [:]
    /// The devices of the last book, sorted: kept while the next book has the same ones,
    /// so a write after a change of fences does not sort every device's name again.
    private var names: [String] = []

    public init() {}

    /// The file's text for `book`: pretty-printed, keys sorted, devices and fences in
    /// order; groups and shared fences when there are any. Remembers the text of each
    /// device of `book` (and forgets the others) for the next call.
    public mutating func contents(of book: FenceBook) -> [UInt8] {
        let writer = JSONWriter(pretty: true, sortedKeys: true)
        if names.count != book.devices.count || !names.allSatisfy({ book.devices[$0] != nil }) {
            names = book.devices.keys.sorted()
            devices = devices.filter { book.devices[$0.key] != nil }
        }
        var out: [UInt8] = []
        out.reserveCapacity(devices.values.reduce(64) { $0 + $1.text.count + 16 })
        out.append(contentsOf: "{\n  \"devices\": ".utf8)
        if names.isEmpty {
            out.append(contentsOf: "{}".utf8)
        } else {
            out.append(UInt8(ascii: "{"))
            for (position, device) in names.enumerated() {
                out.append(contentsOf: (position > 0 ? ",\n    " : "\n    ").utf8)
                let fences = book.fences(of: device)
                if let entry = devices[device], entry.fences == fences {
                    out.append(contentsOf: entry.text)
                    continue
                }
                var text: [UInt8] = []
                JSONWriter.appendString(device, to: &text)
                text.append(contentsOf: ": ".utf8)
                writer.append(.array(fences.map(FenceCodec.encode)), to: &text, indent: 2)
                out.append(contentsOf: text)
                devices[device] = Entry(fences: fences, text: text)
            }
            out.append(contentsOf: "\n  }".utf8)
        }
        var rest = JSONObject()
        FenceFile.addShared(of: book, to: &rest)
        for member in rest.members.sorted(by: { $0.key < $1.key }) {
            out.append(contentsOf: ",\n  ".utf8)
            JSONWriter.appendString(member.key, to: &out)
            out.append(contentsOf: ": ".utf8)
            writer.append(member.value, to: &out, indent: 1)
        }
        out.append(contentsOf: "\n}\n".utf8)
        return out
    }
}
