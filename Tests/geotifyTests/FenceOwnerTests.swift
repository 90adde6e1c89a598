import GeotifyCore
import GeotifyStore
import Testing
@testable import geotify

/// How `geotify fences` tells a device's list from a shared set in its arguments, and
/// which part of the file `list` shows: pure, without running the binary.
@Suite("Fence owners in the fences command")
struct FenceOwnerTests {
    static let options = [FenceOwner.shared, FenceOwner.group, CommandOption(name: "id", placeholder: "ID", help: "")]

    func parse(_ words: [String], _ positionals: [String]) throws -> (owner: FenceOwner?, names: [String]) {
        try FenceOwner.parse(Arguments(words, command: "fences", options: Self.options), positionals: positionals, usage: "rm DEVICE ID")
    }

    func usageError(_ words: [String], _ positionals: [String]) -> String? {
        do throws(UsageError) {
            _ = try FenceOwner.parse(Arguments(words, command: "fences", options: Self.options), positionals: positionals, usage: "rm DEVICE ID")
            return nil
        } catch {
            return error.message
        }
    }

    @Test func theFirstPositionalIsTheDeviceUnlessASharedSetIsNamed() throws {
        #expect(try parse(["alice/phone", "home"], ["DEVICE", "ID"]) == (.device("alice/phone"), ["home"]))
        #expect(try parse(["--shared", "office"], ["DEVICE", "ID"]) == (.shared("shared"), ["office"]))
        #expect(try parse(["school", "--group", "family"], ["DEVICE", "ID"]) == (.shared("family"), ["school"]))
        #expect(try parse(["--group=family"], []) == (.shared("family"), []))
        #expect(try parse([], []) == (nil, []))
    }

    @Test func anOptionalDeviceMayBeLeftOut() throws {
        #expect(try parse([], ["[DEVICE]"]) == (nil, []))
        #expect(try parse(["van/7"], ["[DEVICE]"]) == (.device("van/7"), []))
        #expect(try parse(["--shared"], ["[DEVICE]"]) == (.shared("shared"), []))
        #expect(usageError(["--shared", "van/7"], ["[DEVICE]"]) == "unexpected argument \"van/7\"; usage: geotify fences rm DEVICE ID")
        #expect(usageError(["--shared"], ["[DEVICE]", "ID"]) == "missing ID; usage: geotify fences rm DEVICE ID",
                "a set stands in for the device that may be left out, not for what follows it")
    }

    @Test func missingAndExtraArgumentsAndMixedSetsAreUsageErrors() {
        #expect(usageError(["alice/phone"], ["DEVICE", "ID"]) == "missing ID; usage: geotify fences rm DEVICE ID")
        #expect(usageError([], ["DEVICE", "ID"]) == "missing DEVICE and ID; usage: geotify fences rm DEVICE ID")
        #expect(usageError(["--shared"], ["DEVICE", "ID"]) == "missing ID; usage: geotify fences rm DEVICE ID")
        #expect(usageError(["--shared", "alice/phone", "home"], ["DEVICE", "ID"]) == "unexpected argument \"home\"; usage: geotify fences rm DEVICE ID")
        #expect(usageError(["--shared", "--group", "family", "x"], ["DEVICE", "ID"])
            == "--shared and --group exclude each other: --shared is every device's set, --group NAME a group's")
        #expect(usageError(["--group", "shared", "x"], ["DEVICE", "ID"])
            == "\"shared\" is not a group: --shared names the fences shared with every device")
    }

    static func fence(_ identifier: String, _ latitude: Double, _ longitude: Double, _ radius: Double) -> Fence {
        Fence(identifier: identifier, region: .circle(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius), note: "", eventType: .onEntry)
    }

    static let book = FenceBook(
        devices: ["alice/phone": [Self.fence("home", 52.52, 13.405, 100)], "van/7": []],
        groups: ["family": ["alice/phone", "bob/phone"], "crew": ["van/7"]],
        shared: [
            "shared": SharedFences(owner: "shared", fences: [Self.fence("office", 52.5, 13.4, 150)]),
            "family": SharedFences(owner: "family", fences: [Self.fence("school", 52.53, 13.38, 150)]),
        ])

    @Test func listShowsADeviceWithTheSetsThatApplyToItAndASetWithItsGroup() throws {
        #expect(try FencesCommand.part(of: Self.book, device: nil, set: nil) == Self.book)
        let bob = try FencesCommand.part(of: Self.book, device: "bob/phone", set: nil)
        #expect(bob.devices == ["bob/phone": []])
        #expect(bob.groups == ["family": ["alice/phone", "bob/phone"]])
        #expect(Set(bob.shared.keys) == ["shared", "family"])
        let van = try FencesCommand.part(of: Self.book, device: "van/7", set: nil)
        #expect(Set(van.shared.keys) == ["shared"])
        let family = try FencesCommand.part(of: Self.book, device: nil, set: .shared("family"))
        #expect(family.devices.isEmpty)
        #expect(family.groups == ["family": ["alice/phone", "bob/phone"]])
        #expect(family.shared["family"] == Self.book.shared["family"])
        let crew = try FencesCommand.part(of: Self.book, device: nil, set: .shared("crew"))
        #expect(crew.shared.isEmpty)
        #expect(crew.groups == ["crew": ["van/7"]])
    }

    @Test func listRefusesAnUnknownDeviceOrGroup() {
        let device = #expect(throws: FenceChangeError.self) { try FencesCommand.part(of: Self.book, device: "bob", set: nil) }
        #expect(device?.code == .unknownDevice)
        let group = #expect(throws: FenceChangeError.self) { try FencesCommand.part(of: Self.book, device: nil, set: .shared("friends")) }
        #expect(group?.code == .unknownGroup)
    }
}
