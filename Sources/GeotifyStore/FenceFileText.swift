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
        var text: [UInt8]
    }

    private var devices: [String: Entry] = [:]

    public init() {}

    /// The file's text for `book`: pretty-printed, keys sorted, devices and fences in
    /// order; groups and shared fences when there are any. Remembers the text of each
    /// device of `book` (and forgets the others) for the next call.
    public mutating func contents(of book: FenceBook) -> [UInt8] {
        let writer = JSONWriter(pretty: true, sortedKeys: true)
        var out: [UInt8] = []
        out.reserveCapacity(devices.values.reduce(64) { $0 + $1.text.count + 16 })
        out.append(contentsOf: "{\n  \"devices\": ".utf8)
        let names = book.devices.keys.sorted()
        var kept: [String: Entry] = [:]
        kept.reserveCapacity(names.count)
        if names.isEmpty {
            out.append(contentsOf: "{}".utf8)
        } else {
            out.append(UInt8(ascii: "{"))
            for (position, device) in names.enumerated() {
                out.append(contentsOf: (position > 0 ? ",\n    " : "\n    ").utf8)
                JSONWriter.appendString(device, to: &out)
                out.append(contentsOf: ": ".utf8)
                let fences = book.fences(of: device)
                var entry = devices[device]
                if entry?.fences != fences {
                    var text: [UInt8] = []
                    writer.append(.array(fences.map(FenceCodec.encode)), to: &text, indent: 2)
                    entry = Entry(fences: fences, text: text)
                }
                if let entry {
                    out.append(contentsOf: entry.text)
                    kept[device] = entry
                }
            }
            out.append(contentsOf: "\n  }".utf8)
        }
        devices = kept
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
