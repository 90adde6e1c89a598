import Foundation
import Testing
import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Changes to the shared sets (every device's, a group's) and the names a device may not
/// be created under: pure on a book, then written to a fence file and a fence directory.
@Suite("Shared fence changes")
struct SharedFenceChangeTests {
    let directory = TemporaryDirectory()

    static let text = """
        {"devices": {"alice/phone": [
          {"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntry"}],
          "bob/phone": []},
         "groups": {"family": ["alice/phone", "bob/phone"], "crew": ["van/7"]},
         "shared": [
          {"identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150, "eventType": "onEntryAndExit"},
          {"identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150, "eventType": "onEntry", "group": "family"}]}
        """

    static let book = FenceFile(path: "fences.json").parse(Array(text.utf8)).book!

    static func fence(_ identifier: String) -> JSON {
        ["identifier": .string(identifier), "latitude": 52.5, "longitude": 13.4, "radius": 50, "eventType": "onEntry"]
    }

    static func patch(_ json: JSON) -> JSONObject {
        json.objectValue ?? JSONObject()
    }

    func refusal(_ change: SharedFenceChange, limits: FenceLimits = FenceLimits()) -> FenceChangeError? {
        do {
            _ = try change.apply(to: Self.book, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func addAppendsToTheSetOfEveryDeviceAndLeavesTheRest() throws {
        let applied = try SharedFenceChange(owner: "shared", .add(device: "shared", fence: Self.fence("gym"))).apply(to: Self.book, limits: FenceLimits())
        #expect(applied.book.shared["shared"]?.fences.map(\.identifier) == ["office", "gym"])
        #expect(applied.book.shared["family"] == Self.book.shared["family"])
        #expect(applied.book.devices == Self.book.devices)
        #expect(applied.book.groups == Self.book.groups)
        #expect(applied.fence?.identifier == "gym")
        #expect(applied.book.devices["shared"] == nil)
    }

    @Test func aGroupsSetIsCreatedEditedAndEmptied() throws {
        var book = Self.book
        book = try SharedFenceChange(owner: "crew", .add(device: "crew", fence: Self.fence("depot"))).apply(to: book, limits: FenceLimits()).book
        #expect(book.shared["crew"]?.fences.map(\.identifier) == ["depot"])
        #expect(book.deviceFences(of: "van/7").shared.map(\.owner).contains("crew"))
        let edited = try SharedFenceChange(owner: "crew", .edit(device: "crew", identifier: "depot", fields: Self.patch(["radius": 300, "identifier": "yard"])))
            .apply(to: book, limits: FenceLimits())
        #expect(edited.previous?.identifier == "depot")
        #expect(edited.book.shared["crew"]?.fences.map(\.identifier) == ["yard"])
        let removed = try SharedFenceChange(owner: "crew", .delete(device: "crew", identifier: "yard")).apply(to: edited.book, limits: FenceLimits())
        #expect(removed.book.shared["crew"] == nil)
        #expect(removed.book.groups["crew"] == ["van/7"])
    }

    @Test func aSetIsNotLimitedByTheFencesOfADevice() throws {
        let fences = (1...5).map { Self.fence("poi-\($0)") }
        let applied = try SharedFenceChange(owner: "shared", .append(device: "shared", fences: fences))
            .apply(to: Self.book, limits: FenceLimits(maximumFencesPerDevice: 2))
        #expect(applied.book.shared["shared"]?.fences.count == 6)
    }

    @Test func anUndefinedGroupIsRefusedNamingTheGroupsThereAre() {
        let error = refusal(SharedFenceChange(owner: "friends", .add(device: "friends", fence: Self.fence("pub"))))
        #expect(error?.code == .unknownGroup)
        #expect(error?.message == #"there is no group "friends" in the fence file (its groups: "crew", "family"); define it under "groups" first"#)
    }

    @Test func identifiersAreUniqueInTheSetAndAgainstTheDevicesItAppliesTo() {
        let twice = refusal(SharedFenceChange(owner: "family", .add(device: "family", fence: Self.fence("school"))))
        #expect(twice?.code == .duplicateIdentifier)
        #expect(twice?.message == #"the shared set of group "family" already has a fence "school"; identifiers must be unique per shared set"#)
        let own = refusal(SharedFenceChange(owner: "shared", .add(device: "shared", fence: Self.fence("home"))))
        #expect(own?.code == .duplicateIdentifier)
        #expect(own?.message == #"device "alice/phone" has a fence "home" of its own, and the shared set applies to it; identifiers must be unique per device"#)
        // A group's set may use an identifier of a device outside the group.
        #expect(refusal(SharedFenceChange(owner: "crew", .add(device: "crew", fence: Self.fence("home")))) == nil)
    }

    @Test func aMissingFenceIsNamedWithTheSet() {
        let error = refusal(SharedFenceChange(owner: "shared", .delete(device: "shared", identifier: "gym")))
        #expect(error?.code == .unknownFence)
        #expect(error?.message == #"the shared set has no fence "gym" (its fences: "office")"#)
    }

    @Test func aDeviceIsNotCreatedUnderTheNameOfASharedSet() {
        for (device, reason) in [("shared", "it names the fences shared with every device"), ("family", "it is a group of the fence file")] {
            for change in [FenceChange.add(device: device, fence: Self.fence("x")), .append(device: device, fences: [Self.fence("x")]),
                           .replaceAll(device: device, fences: [])] {
                let error = #expect(throws: FenceChangeError.self) { try change.apply(to: Self.book, limits: FenceLimits()) }
                #expect(error?.code == .reservedDevice)
                #expect(error?.message == "\"\(device)\" is not a device: \(reason), so no device of that name is created")
            }
        }
        // A device the file already lists under such a name stays changeable.
        let listed = FenceBook(devices: ["shared": []])
        #expect(throws: Never.self) { try FenceChange.add(device: "shared", fence: Self.fence("x")).apply(to: listed, limits: FenceLimits()) }
    }

    @Test func theFileIsWrittenWithTheChangedSetAndLoadsBack() throws {
        let file = FenceFile(path: directory.write(Self.text, to: "fences.json"))
        let (applied, written) = try file.apply(SharedFenceChange(owner: "family", .add(device: "family", fence: Self.fence("park"))))
        #expect(FileManager.default.contents(atPath: file.path).map(Array.init) == written)
        let reloaded = file.load().book
        #expect(reloaded == applied.book)
        #expect(reloaded?.shared["family"]?.fences.map(\.identifier) == ["school", "park"])
        #expect(reloaded?.fences(of: "alice/phone").map(\.identifier) == ["home"])
    }

    /// A change to a shared set reports the warnings of loading the file with its own,
    /// as a device's change does: a clamped radius elsewhere becomes explicit when the
    /// file is rewritten.
    @Test func theLoadingWarningsAreReportedWithASharedChange() throws {
        let text = #"{"devices": {"a": [{"identifier": "x", "latitude": 0, "longitude": 0, "radius": 0, "eventType": "onEntry"}]}, "shared": []}"#
        let file = FenceFile(path: directory.write(text, to: "fences.json"))
        let (applied, _) = try file.apply(SharedFenceChange(owner: "shared", .add(device: "shared", fence: Self.fence("park"))))
        #expect(applied.warnings.map(\.reason) == ["radius 0 m clamped to 1 m (allowed 1...100000 m)"])
    }

    @Test func aFenceDirectoryGetsOnlyItsSharedFileRewritten() throws {
        let root = directory.file("fences")
        try FileManager.default.createDirectory(atPath: root + "/devices", withIntermediateDirectories: true)
        _ = directory.write(#"{"groups": {"family": ["alice/phone"]}, "shared": []}"#, to: "fences/shared.json")
        let device = #"{"devices": {"alice/phone": [\#(JSONWriter().string(Self.fence("home")))]}}"#
        let devicePath = directory.write(device, to: "fences/devices/alice%2Fphone.json")
        let file = FenceFile(path: root)
        #expect(file.layout == .directory)
        _ = try file.apply(SharedFenceChange(owner: "family", .add(device: "family", fence: Self.fence("school"))))
        #expect(try String(contentsOfFile: devicePath, encoding: .utf8) == device)
        let book = file.load().book
        #expect(book?.shared["family"]?.fences.map(\.identifier) == ["school"])
        #expect(book?.fences(of: "alice/phone").map(\.identifier) == ["home"])
    }
}
