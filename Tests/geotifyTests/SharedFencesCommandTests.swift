import Foundation
import GeotifyStore
import GeotifyTestSupport
import Testing

/// `geotify fences` on a file with shared fences and groups, run as the built
/// executable: the tables, the whole file through `list --json` and `export` and back,
/// changes to shared sets, the names a device cannot take, and OwnTracks waypoints.
@Suite("geotify fences: shared fences, groups, OwnTracks export", .waiting)
struct SharedFencesCommandTests: FencesCommandFixture {
    let directory: URL

    init() throws {
        directory = try makeTemporaryDirectory("shared-fences")
        try write(Self.fences, to: "fences.json")
    }

    static let fences = """
        {"devices": {
           "alice/phone": [
             {"identifier": "home", "name": "Home", "rid": "a1b2c3", "latitude": 52.52, "longitude": 13.405, "radius": 100.4,
              "note": "Welcome home", "eventType": "onEntryAndExit"},
             {"identifier": "park", "polygon": [[13.40, 52.51], [13.41, 52.51], [13.41, 52.52], [13.40, 52.51]],
              "note": "In the park", "eventType": "onEntry"}],
           "bob/phone": []},
         "groups": {"family": ["alice/phone", "bob/phone"]},
         "shared": [
           {"identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150, "note": "At the office", "eventType": "onEntryAndExit"},
           {"identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150, "note": "At school", "eventType": "onEntry", "group": "family"}]}
        """

    // MARK: list

    @Test func listShowsTheDevicesFencesTheSharedFencesAndTheGroups() throws {
        let result = try fences("list")
        #expect(result.status == 0)
        #expect(result.error == "")
        #expect(result.output == """
            DEVICE       IDENTIFIER  EVENT           LAT                LON                 RADIUS M  NOTE
            alice/phone  home        onEntryAndExit  52.52              13.405              100.4     Welcome home
            alice/phone  park        onEntry         52.51333333333333  13.406666666666666  polygon   In the park

            SHARED WITH   IDENTIFIER  EVENT           LAT      LON      RADIUS M  NOTE
            every device  office      onEntryAndExit  52.5163  13.3777  150       At the office
            group family  school      onEntry         52.53    13.38    150       At school

            GROUP   DEVICES
            family  alice/phone, bob/phone

            """)
    }

    @Test func listOfADeviceShowsTheSharedFencesThatApplyToIt() throws {
        let bob = try fences("list", "--device", "bob/phone")
        #expect(bob.status == 0)
        #expect(bob.output == """
            SHARED WITH   IDENTIFIER  EVENT           LAT      LON      RADIUS M  NOTE
            every device  office      onEntryAndExit  52.5163  13.3777  150       At the office
            group family  school      onEntry         52.53    13.38    150       At school

            """)
        let json = try fences("list", "--device", "bob/phone", "--json")
        #expect(json.output.contains(#""bob/phone": []"#))
        #expect(json.output.contains(#""group": "family""#))
        #expect(!json.output.contains("alice/phone\": ["))
        let group = try fences("list", "--group", "family")
        #expect(group.output == """
            SHARED WITH   IDENTIFIER  EVENT    LAT    LON    RADIUS M  NOTE
            group family  school      onEntry  52.53  13.38  150       At school

            GROUP   DEVICES
            family  alice/phone, bob/phone

            """)
        #expect(try fences("list", "--shared").output.hasPrefix("SHARED WITH   IDENTIFIER  EVENT           LAT      LON      RADIUS M  NOTE\nevery device  office"))
    }

    // MARK: the whole file

    @Test func listJSONAndExportRoundTripTheWholeFile() throws {
        let listed = try fences("list", "--json")
        #expect(listed.status == 0)
        for part in [#""groups": {"#, #""family": ["#, #""shared": ["#, #""identifier": "office""#, #""group": "family""#, #""bob/phone": []"#, #""rid": "a1b2c3""#] {
            #expect(listed.output.contains(part), "list --json lost \(part)")
        }
        let exported = try fences("export")
        #expect(exported.status == 0)
        #expect(exported.output == listed.output)

        // The backup is a fence file: the same tables, the same JSON, through either command.
        try write(exported.output, to: "backup.json")
        #expect(try fences("list", "--json", file: "backup.json").output == listed.output)
        #expect(try fences("export", file: "backup.json").output == listed.output)
        #expect(try fences("list", file: "backup.json").output == fences("list").output)
    }

    // MARK: changing shared sets

    @Test func addEditAndRemoveManageTheSharedSets() throws {
        let added = try fences("add", "--shared", "--id", "gym", "--lat", "52.5", "--lon", "13.4", "--radius", "60", "--event", "onEntry", "--note", "Gym")
        #expect(added.status == 0)
        #expect(added.error == "")
        #expect(added.output == "added fence \"gym\" to the shared set\n")
        let grouped = try fences("add", "--group", "family", "--id", "zoo", "--lat", "52.51", "--lon", "13.33", "--radius", "300", "--event", "onEntry")
        #expect(grouped.output == "added fence \"zoo\" to the shared set of group \"family\"\n")
        let edited = try fences("edit", "--group", "family", "zoo", "--radius", "350")
        #expect(edited.output == "changed fence \"zoo\" of the shared set of group \"family\": radius 300 → 350\n")
        let removed = try fences("rm", "--shared", "office")
        #expect(removed.output == "removed fence \"office\" from the shared set\n")
        let shown = try fences("show", "--group", "family", "zoo")
        #expect(shown.output.hasPrefix("shared with:  group family\nidentifier:   zoo\n"))
        #expect(try fences("list").output.contains("""
            SHARED WITH   IDENTIFIER  EVENT    LAT    LON    RADIUS M  NOTE
            every device  gym         onEntry  52.5   13.4   60        Gym
            group family  school      onEntry  52.53  13.38  150       At school
            group family  zoo         onEntry  52.51  13.33  350
            """))
        // The file holds the sets as the fence file writes them; no device was created.
        let file = try read()
        #expect(file.contains(#""group": "family""#))
        #expect(!file.contains(#""identifier": "office""#))
        #expect(file.contains(#""shared": ["#))
        #expect(try fences("list", "--json").output == file)
        #expect(try fences("list", "--device", "shared").status == 1)
    }

    @Test func aSharedFenceMayNotTakeTheIdentifierOfADevicesOwnFence() throws {
        let result = try fences("add", "--group", "family", "--id", "home", "--lat", "1", "--lon", "2", "--radius", "30", "--event", "onEntry")
        #expect(result.status == 1)
        #expect(result.error == """
            error: device "alice/phone" has a fence "home" of its own, and the shared set of group "family" applies to it; identifiers must be unique per device

            """)
        #expect(try read() == Self.fences)
    }

    @Test func importAndExportASharedSet() throws {
        let exported = try fences("export", "--group", "family")
        #expect(exported.status == 0)
        try write(exported.output, to: "family.json")
        #expect(try fences("rm", "--group", "family", "school").status == 0)
        let imported = try fences("import", "--group", "family", "family.json")
        #expect(imported.status == 0)
        #expect(imported.output == "imported 1 fence (the iOS app's geotifications) into the shared set of group \"family\", which now has 1\n")
        #expect(try fences("export", "--group", "family").output == exported.output)
        #expect(try fences("import", "--shared", "family.json").status == 0)
        let again = try fences("import", "--shared", "family.json")
        #expect(again.status == 1)
        #expect(again.error == """
            error: the shared set already has a fence "school"; identifiers must be unique per shared set
            hint: --replace replaces the set's whole list with the file's fences

            """)
    }

    // MARK: names a device cannot take

    @Test(arguments: [
        (["add", "shared", "--id", "x", "--lat", "1", "--lon", "2", "--radius", "30", "--event", "onEntry"], "shared",
         "it names the fences shared with every device"),
        (["add", "family", "--id", "x", "--lat", "1", "--lon", "2", "--radius", "30", "--event", "onEntry"], "family",
         "it is a group of the fence file"),
        (["import", "family", "app.json"], "family", "it is a group of the fence file"),
        (["import", "shared", "app.json", "--replace"], "shared", "it names the fences shared with every device"),
    ])
    func aDeviceIsNotCreatedUnderTheNameOfASharedSet(words: [String], name: String, reason: String) throws {
        try write(#"[{"identifier": "pub", "latitude": 1, "longitude": 2, "radius": 10, "note": "", "eventType": "On Entry"}]"#, to: "app.json")
        let result = try runGeotify(["fences"] + words + ["--fences", "fences.json"], in: directory)
        #expect(result.status == 1)
        #expect(result.output == "")
        #expect(result.error == """
            error: "\(name)" is not a device: \(reason), so no device of that name is created
            hint: --shared changes the fences shared with every device, --group NAME those of a group

            """)
        #expect(try read() == Self.fences)
    }

    @Test func anUndefinedGroupIsRefused() throws {
        let result = try fences("add", "--group", "friends", "--id", "pub", "--lat", "1", "--lon", "2", "--radius", "30", "--event", "onEntry")
        #expect(result.status == 1)
        #expect(result.error == "error: there is no group \"friends\" in the fence file (its groups: \"family\"); define it under \"groups\" first\n")
        #expect(try fences("list", "--group", "friends").status == 1)
        #expect(try read() == Self.fences)
    }

    @Test(arguments: [
        (["list", "--shared", "--group", "family"],
         "--shared and --group exclude each other: --shared is every device's set, --group NAME a group's"),
        (["list", "--device", "bob/phone", "--shared"], "--device and --shared exclude each other"),
        (["add", "--group", "shared", "--id", "x"], "\"shared\" is not a group: --shared names the fences shared with every device"),
        (["rm", "--shared", "alice/phone", "home"], "unexpected argument \"home\"; usage: geotify fences rm DEVICE ID"),
        (["export", "--owntracks"], "--owntracks exports one list: give DEVICE, --shared or --group NAME"),
    ])
    func sharedSetUsageErrorsExitTwo(words: [String], message: String) throws {
        let result = try runGeotify(["fences"] + words + ["--fences", "fences.json"], in: directory)
        #expect(result.status == 2)
        #expect(result.error == "geotify: \(message) (see 'geotify fences --help')\n")
        #expect(try read() == Self.fences)
    }

    // MARK: OwnTracks

    @Test func exportOwnTracksWritesTheWaypointsTheAppImports() throws {
        let result = try fences("export", "--owntracks", "alice/phone")
        #expect(result.status == 0)
        #expect(result.error == "warning: fence \"park\" of device \"alice/phone\" is a polygon; OwnTracks regions are circles, so it is left out\n")
        #expect(result.output == """
            {
              "_type": "waypoints",
              "waypoints": [
                {
                  "_type": "waypoint",
                  "desc": "Home",
                  "lat": 52.52,
                  "lon": 13.405,
                  "rad": 100,
                  "rid": "a1b2c3",
                  "tst": \(FenceExport.ownTracksCreationTime(of: "home"))
                }
              ]
            }

            """)
        let shared = try fences("export", "--owntracks", "--shared")
        #expect(shared.error == "")
        #expect(shared.output.contains(#""desc": "office""#))
        #expect(shared.output.contains(#""_type": "waypoints""#))

        // The app's file imports back into Geotify with the name and region ID.
        try write(result.output, to: "home.otrw")
        let imported = try fences("import", "bob/phone", "home.otrw")
        #expect(imported.output == "imported 1 fence (OwnTracks waypoints) into device \"bob/phone\", which now has 1\n")
        let home = try fences("show", "bob/phone", "home")
        #expect(home.output.contains("name:        Home\n"))
        #expect(home.output.contains("rid:         a1b2c3\n"))
    }
}
