import GeotifyCore
import GeotifyJSON
import GeotifyStore
import Testing

/// The fence file's text made device by device, reusing each unchanged device's text, is
/// byte for byte the pretty JSON of the whole file written in one go.
@Suite("Fence file text")
struct FenceFileTextTests {
    static let fence = #""latitude": 1.5, "longitude": 2, "radius": 50, "eventType": "onEntryAndExit", "note": "a \"quoted\" note""#

    /// The whole file as one JSON value, written by the JSON writer: what the text must be.
    static func reference(_ book: FenceBook) -> [UInt8] {
        var devices = JSONObject()
        for device in book.devices.keys.sorted() { devices[device] = .array(book.fences(of: device).map(FenceCodec.encode)) }
        var root = JSONObject([JSONObject.Member(key: "devices", value: .object(devices))])
        if !book.groups.isEmpty {
            var groups = JSONObject()
            for group in book.groups.keys.sorted() { groups[group] = .array((book.groups[group] ?? []).map(JSON.string)) }
            root["groups"] = .object(groups)
        }
        if !book.shared.isEmpty {
            var shared: [JSON] = []
            let owners = (book.shared[SharedFences.everyDevice] == nil ? [] : [SharedFences.everyDevice])
                + book.shared.keys.filter { $0 != SharedFences.everyDevice }.sorted()
            for owner in owners {
                for fence in book.shared[owner]?.fences ?? [] {
                    var object = FenceCodec.encode(fence).objectValue ?? JSONObject()
                    if owner != SharedFences.everyDevice { object["group"] = .string(owner) }
                    shared.append(.object(object))
                }
            }
            root["shared"] = .array(shared)
        }
        return JSONWriter(pretty: true, sortedKeys: true).bytes(.object(root))
    }

    func book(_ text: String) throws -> FenceBook {
        let loaded = FenceFile(path: "fences.json").parse(Array(text.utf8))
        return try #require(loaded.book, "\(loaded.errors)")
    }

    @Test func textMadeDeviceByDeviceIsTheWholeFileWrittenAtOnce() throws {
        var book = try book("""
            {"devices": {"alice/phone": [{"identifier": "home", \(Self.fence)}, {"identifier": "work", \(Self.fence)}],
                         "bob/phone": [], "van/7": [{"identifier": "depot", \(Self.fence)}]},
             "groups": {"family": ["alice/phone", "bob/phone"]},
             "shared": [{"identifier": "office", \(Self.fence)}, {"identifier": "school", \(Self.fence), "group": "family"}]}
            """)
        var text = FenceFileText()
        #expect(text.contents(of: book) == Self.reference(book))

        let moved = try self.book(#"{"devices": {"van/7": [{"identifier": "depot", "latitude": 3, "longitude": 4, "radius": 75, "eventType": "onExit"}]}}"#)
        book = book.replacing(devices: ["van/7": moved.fences(of: "van/7"), "carol/watch": moved.fences(of: "van/7")])
        #expect(text.contents(of: book) == Self.reference(book), "one device changed and one added, the others' text reused")
        book = book.replacing(devices: ["alice/phone": []])
        #expect(text.contents(of: book) == Self.reference(book))
        #expect(text.contents(of: FenceBook()) == Self.reference(FenceBook()))
        #expect(FenceFile.contents(of: book) == Self.reference(book))
    }
}
