import Foundation
import GeotifyTestSupport
import Testing

/// `geotify fences`: every subcommand run as the built executable, with its output, its
/// exit status and the fence file on disk afterwards.
@Suite("geotify fences", .waiting)
struct FencesCommandTests: FencesCommandFixture {
    let directory: URL

    init() throws {
        directory = try makeTemporaryDirectory("fences")
        try write(Self.fences, to: "fences.json")
    }

    static let fences = """
        {
          "devices": {
            "alice/phone": [
              {
                "eventType": "onEntryAndExit",
                "identifier": "home",
                "latitude": 52.52,
                "longitude": 13.405,
                "note": "Welcome home",
                "radius": 100
              },
              {
                "eventType": "onExit",
                "identifier": "office",
                "latitude": 52.5163,
                "longitude": 13.3777,
                "note": "Left the office",
                "radius": 150
              }
            ],
            "van/7": [
              {
                "eventType": "onEntry",
                "identifier": "depot",
                "latitude": 48.1374,
                "longitude": 11.5755,
                "note": "Van 7 is back at the depot",
                "radius": 250
              }
            ]
          }
        }

        """

    // MARK: help and usage

    @Test func helpDescribesEverySubcommandAndTheJSONShapes() throws {
        let overview = try runGeotify(["--help"], in: directory)
        #expect(overview.output.contains("fences    list, show, add, edit, remove, import and export fences"))
        for words in [["fences", "--help"], ["help", "fences"], ["fences", "add", "--help"]] {
            let help = try runGeotify(words, in: directory)
            #expect(help.status == 0)
            #expect(help.output.hasPrefix("usage: geotify fences <subcommand> [options]\n"))
            #expect(help.output.contains("  add DEVICE --id ID --lat DEG --lon DEG --radius M --event TYPE [--note TEXT]\n"))
            #expect(help.output.contains("  import DEVICE FILE [--replace]\n"))
            #expect(help.output.contains(#"list   the fence file's form: {"devices": {"alice/phone": [{"eventType": "onEntry","#))
            #expect(help.output.contains("--fences FILE"))
        }
    }

    @Test(arguments: [
        (["fences"], "geotify: missing subcommand, one of list, show, add, edit, rm, import, export (before any options) (see 'geotify fences --help')\n"),
        (["fences", "move"], "geotify: unknown subcommand \"move\" (one of list, show, add, edit, rm, import, export) (see 'geotify fences --help')\n"),
        (["fences", "lst"], "geotify: unknown subcommand \"lst\" (did you mean \"list\"? one of list, show, add, edit, rm, import, export) (see 'geotify fences --help')\n"),
        (["fences", "show", "alice/phone"], "geotify: missing ID; usage: geotify fences show DEVICE ID [--json] (see 'geotify fences --help')\n"),
        (["fences", "rm", "a", "b", "c"], "geotify: unexpected argument \"c\"; usage: geotify fences rm DEVICE ID (see 'geotify fences --help')\n"),
        (["fences", "list", "--colour"], "geotify: unknown option --colour (see 'geotify fences --help')\n"),
        (["fences", "add", "a", "--id", "x", "--lat", "1"], "geotify: fences add needs --lon, --radius, --event (see 'geotify fences --help')\n"),
        (["fences", "add", "a", "--id", "x", "--lat", "north", "--lon", "1", "--radius", "5", "--event", "onEntry"],
         "geotify: --lat must be a number, not \"north\" (see 'geotify fences --help')\n"),
        (["fences", "edit", "alice/phone", "home", "--radius=0x10"], "geotify: --radius must be a number, not \"0x10\" (see 'geotify fences --help')\n"),
        (["fences", "edit", "alice/phone", "home"],
         "geotify: nothing to change: give at least one of --event, --id, --lat, --lon, --note, --radius (see 'geotify fences --help')\n"),
    ])
    func usageErrorsExitTwoAndLeaveTheFileAlone(words: [String], message: String) throws {
        let result = try runGeotify(words + ["--fences", "fences.json"], in: directory)
        #expect(result.status == 2)
        #expect(result.error == message)
        #expect(try read() == Self.fences)
    }

    // MARK: list, show, export

    @Test func listPrintsATableSortedByDeviceThenFileOrder() throws {
        let result = try fences("list")
        #expect(result.status == 0)
        #expect(result.error == "")
        #expect(result.output == """
            DEVICE       IDENTIFIER  EVENT           LAT      LON      RADIUS M  NOTE
            alice/phone  home        onEntryAndExit  52.52    13.405   100       Welcome home
            alice/phone  office      onExit          52.5163  13.3777  150       Left the office
            van/7        depot       onEntry         48.1374  11.5755  250       Van 7 is back at the depot

            """)
        let one = try fences("list", "--device", "van/7")
        #expect(one.output == """
            DEVICE  IDENTIFIER  EVENT    LAT      LON      RADIUS M  NOTE
            van/7   depot       onEntry  48.1374  11.5755  250       Van 7 is back at the depot

            """)
    }

    @Test func listJSONIsTheFenceFilesForm() throws {
        #expect(try fences("list", "--json").output == Self.fences)
        let one = try fences("list", "--device", "van/7", "--json")
        #expect(one.status == 0)
        #expect(one.output.hasPrefix("{\n  \"devices\": {\n    \"van/7\": [\n"))
        #expect(!one.output.contains("alice/phone"))
    }

    @Test func listOfAnUnknownDeviceOrAnInvalidFileExitsOne() throws {
        let unknown = try fences("list", "--device", "bob")
        #expect(unknown.status == 1)
        #expect(unknown.error == "error: unknown device \"bob\": it is not in the fence file\n")
        let missing = try runGeotify(["fences", "list", "--fences", "nope.json"], in: directory)
        #expect(missing.status == 1)
        #expect(missing.error == "error: nope.json: no such file\n")
        try write(#"{"devices": {"a": [{"identifier": "x", "latitude": 95, "longitude": 0, "radius": 5, "eventType": "onEntry"}]}}"#, to: "fences.json")
        let invalid = try fences("list")
        #expect(invalid.status == 1)
        #expect(invalid.error == "error: fences.json:1: device \"a\", fence \"x\": latitude 95 is outside -90...90\n")
    }

    @Test func showPrintsEveryFieldOrTheFenceAsJSON() throws {
        let result = try fences("show", "alice/phone", "office")
        #expect(result.status == 0)
        #expect(result.output == """
            device:      alice/phone
            identifier:  office
            latitude:    52.5163
            longitude:   13.3777
            radius:      150
            note:        Left the office
            eventType:   onExit

            """)
        let json = try fences("show", "alice/phone", "office", "--json")
        #expect(json.output == """
            {
              "eventType": "onExit",
              "identifier": "office",
              "latitude": 52.5163,
              "longitude": 13.3777,
              "note": "Left the office",
              "radius": 150
            }

            """)
    }

    @Test func showOfAnUnknownFenceNamesTheDevicesFences() throws {
        let result = try fences("show", "alice/phone", "gym")
        #expect(result.status == 1)
        #expect(result.output == "")
        #expect(result.error == "error: device \"alice/phone\" has no fence \"gym\" (its fences: \"home\", \"office\")\n")
        #expect(try fences("show", "bob", "gym").error == "error: unknown device \"bob\": it is not in the fence file\n")
    }

    @Test func exportPrintsTheAppsArray() throws {
        let result = try fences("export", "van/7")
        #expect(result.status == 0)
        #expect(result.output == """
            [
              {
                "eventType": "On Entry",
                "identifier": "depot",
                "latitude": 48.1374,
                "longitude": 11.5755,
                "note": "Van 7 is back at the depot",
                "radius": 250
              }
            ]

            """)
        #expect(try fences("export", "bob").status == 1)
    }

    // MARK: add, edit, rm

    @Test func addWritesTheFencePrettyWithSortedKeys() throws {
        let result = try fences("add", "van/7", "--id", "yard", "--lat", "48.14", "--lon=-11.5", "--radius", "75", "--note", "In the yard", "--event", "On Exit")
        #expect(result.status == 0)
        #expect(result.output == "added fence \"yard\" to device \"van/7\"\n")
        #expect(result.error == "")
        #expect(try read() == Self.fences.replacingOccurrences(of: """
                    "radius": 250
                  }
                ]
            """, with: """
                    "radius": 250
                  },
                  {
                    "eventType": "onExit",
                    "identifier": "yard",
                    "latitude": 48.14,
                    "longitude": -11.5,
                    "note": "In the yard",
                    "radius": 75
                  }
                ]
            """))
    }

    @Test func addToANewDeviceCreatesItAndAMissingFile() throws {
        let result = try runGeotify(
            ["fences", "add", "bob/watch", "--id", "gym", "--lat", "1", "--lon", "2", "--radius", "30", "--event", "onEntry,onExit", "--fences", "new.json"],
            in: directory)
        #expect(result.status == 0)
        #expect(try read("new.json") == """
            {
              "devices": {
                "bob/watch": [
                  {
                    "eventType": "onEntryAndExit",
                    "identifier": "gym",
                    "latitude": 1,
                    "longitude": 2,
                    "note": "",
                    "radius": 30
                  }
                ]
              }
            }

            """)
    }

    @Test func aClampedRadiusIsAWarningAndTheFenceIsAdded() throws {
        let result = try fences("add", "alice/phone", "--id", "gym", "--lat", "52.5", "--lon", "13.4", "--radius", "0", "--event", "onEntry")
        #expect(result.status == 0)
        #expect(result.error == "warning: device \"alice/phone\", fence \"gym\": radius 0 m clamped to 1 m (allowed 1...100000 m)\n")
        #expect(try fences("show", "alice/phone", "gym").output.contains("radius:      1\n"))
    }

    /// Started with its standard input closed (`<&-`, as some service managers and cron
    /// jobs start programs), the command still takes the directory's lock and writes: the
    /// lowest descriptor free, 0, is the lock's, and a valid one.
    @Test func addWithStandardInputClosedWritesTheFence() throws {
        let result = try CompletedProcess.run("/bin/sh", [
            "-c", #"exec "$0" "$@" <&-"#, geotifyExecutable.path,
            "fences", "add", "van/7", "--id", "yard", "--lat", "48.14", "--lon", "11.5", "--radius", "75", "--event", "onExit",
            "--fences", "fences.json",
        ], in: directory)
        #expect(result.status == 0)
        #expect(result.error == "")
        #expect(try fences("show", "van/7", "yard").status == 0)
    }

    @Test func refusedAddsExitOneAndLeaveTheFileAsItWas() throws {
        let duplicate = try fences("add", "alice/phone", "--id", "home", "--lat", "1", "--lon", "2", "--radius", "5", "--event", "onEntry")
        #expect(duplicate.status == 1)
        #expect(duplicate.error == "error: device \"alice/phone\" already has a fence \"home\"; identifiers must be unique per device\n")

        let invalid = try fences("add", "alice/phone", "--id", "a+b", "--lat", "95", "--lon", "2", "--radius", "-5", "--event", "sometimes")
        #expect(invalid.status == 1)
        let lines = invalid.error.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[0] == #"error: device "alice/phone", fence "a+b": the fence identifier "a+b" must not contain '/', '+' or '#'"#)
        #expect(lines[1] == #"error: device "alice/phone", fence "a+b": latitude 95 is outside -90...90"#)
        #expect(lines[2] == #"error: device "alice/phone", fence "a+b": radius -5 must not be negative"#)
        #expect(lines[3].hasPrefix(#"error: device "alice/phone", fence "a+b": unknown eventType "sometimes" (one of onEntry, onExit, onEntryAndExit"#))

        let misspelt = try fences("add", "alice/phone", "--id", "gym", "--lat", "1", "--lon", "2", "--radius", "5", "--event", "onEnter")
        #expect(misspelt.status == 1)
        #expect(misspelt.error.hasPrefix(#"error: device "alice/phone", fence "gym": unknown eventType "onEnter" (did you mean "onEntry"? one of"#))

        let device = try fences("add", "alice/+", "--id", "x", "--lat", "1", "--lon", "2", "--radius", "5", "--event", "onEntry")
        #expect(device.status == 1)
        #expect(device.error == "error: the device identifier \"alice/+\" must not contain '+' or '#'\n")
        #expect(try read() == Self.fences)
    }

    @Test func theLimitsComeFromTheSettingsAsForTheBridge() throws {
        try write(#"{"fences": "fences.json", "maximumFencesPerDevice": 2}"#, to: "geotify.json")
        let result = try runGeotify(
            ["fences", "add", "alice/phone", "--id", "gym", "--lat", "1", "--lon", "2", "--radius", "5", "--event", "onEntry", "--config", "geotify.json"],
            in: directory)
        #expect(result.status == 1)
        #expect(result.error == "error: device \"alice/phone\" would have 3 fences, but a device may have at most 2 (maximumFencesPerDevice)\n")
        #expect(try read() == Self.fences)
    }

    @Test func editChangesTheGivenFieldsAndSaysWhatChanged() throws {
        let result = try fences("edit", "alice/phone", "home", "--id", "house", "--radius", "120", "--note", "Hi")
        #expect(result.status == 0)
        #expect(result.output == "changed fence \"house\" of device \"alice/phone\": identifier \"home\" → \"house\", radius 100 → 120, note \"Welcome home\" → \"Hi\"\n")
        let shown = try fences("show", "alice/phone", "house", "--json")
        #expect(shown.output == """
            {
              "eventType": "onEntryAndExit",
              "identifier": "house",
              "latitude": 52.52,
              "longitude": 13.405,
              "note": "Hi",
              "radius": 120
            }

            """)
        #expect(try fences("list").output.split(separator: "\n")[1].hasPrefix("alice/phone  house "))
    }

    @Test func refusedEditsExitOneAndLeaveTheFileAsItWas() throws {
        let rename = try fences("edit", "alice/phone", "home", "--id", "office")
        #expect(rename.status == 1)
        #expect(rename.error == "error: cannot rename \"home\" to \"office\": device \"alice/phone\" already has a fence \"office\"; identifiers must be unique per device\n")
        let unknownDevice = try fences("edit", "bob", "home", "--note", "x")
        #expect(unknownDevice.status == 1)
        #expect(unknownDevice.error == "error: unknown device \"bob\": it is not in the fence file\n")
        let unknownFence = try fences("edit", "alice/phone", "gym", "--note", "x")
        #expect(unknownFence.error == "error: device \"alice/phone\" has no fence \"gym\" (its fences: \"home\", \"office\")\n")
        let invalid = try fences("edit", "alice/phone", "home", "--lon", "200")
        #expect(invalid.error == "error: device \"alice/phone\", fence \"home\": longitude 200 is outside -180...180\n")
        #expect(try read() == Self.fences)
    }

    @Test func rmRemovesTheFence() throws {
        let result = try fences("rm", "alice/phone", "office")
        #expect(result.status == 0)
        #expect(result.output == "removed fence \"office\" from device \"alice/phone\"\n")
        #expect(try fences("list", "--device", "alice/phone").output.split(separator: "\n").count == 2)
        let again = try fences("rm", "alice/phone", "office")
        #expect(again.status == 1)
        #expect(again.error == "error: device \"alice/phone\" has no fence \"office\" (its fences: \"home\")\n")
        #expect(try fences("rm", "alice/phone", "home").status == 0)
        #expect(try fences("list", "--device", "alice/phone").output == "device \"alice/phone\" has no fences\n")
    }

    @Test func aChangeToAnInvalidFileIsRefused() throws {
        let text = #"{"devices": {"a": [{"identifier": "x", "latitude": 95, "longitude": 0, "radius": 5, "eventType": "onEntry"}]}}"#
        try write(text, to: "fences.json")
        let result = try fences("rm", "a", "x")
        #expect(result.status == 1)
        #expect(result.error == "error: fences.json:1: device \"a\", fence \"x\": latitude 95 is outside -90...90\n")
        #expect(try read() == text)
    }

    @Test func aPolygonFenceIsListedAndCanBecomeACircle() throws {
        try write(#"{"devices": {"van/7": [{"identifier": "yard", "polygon": [[11.57, 48.13], [11.58, 48.13], [11.58, 48.14], [11.57, 48.14]], "eventType": "onEntry"}]}}"#, to: "fences.json")
        let row = try fences("list").output.split(separator: "\n")[1]
        #expect(row.hasPrefix("van/7   yard        onEntry  48.135"))
        #expect(row.hasSuffix("  polygon"))
        #expect(try fences("show", "van/7", "yard").output.contains("polygon:     [[11.57,48.13],[11.58,48.13],[11.58,48.14],[11.57,48.14]]\n"))
        let edited = try fences("edit", "van/7", "yard", "--lat", "48.135", "--lon", "11.575", "--radius", "400")
        #expect(edited.status == 0)
        #expect(edited.output.hasPrefix("changed fence \"yard\" of device \"van/7\": polygon [[11.57,48.13],"))
        #expect(try fences("list").output.split(separator: "\n")[1] == "van/7   yard        onEntry  48.135  11.575  400")
    }

    // MARK: import

    static let ownTracks = """
        {"_type": "waypoints", "_creator": "OwnTracks Android 2.5.3", "waypoints": [
          {"_type": "waypoint", "desc": "Gym", "lat": 52.5, "lon": 13.4, "rad": 40, "tst": 1700000000, "rid": "a1b2c3"},
          {"_type": "waypoint", "desc": "Kids/School", "lat": 52.51, "lon": 13.41, "rad": 80, "tst": 1700000100},
          {"_type": "waypoint", "desc": "Desk", "tst": 1700000200, "uuid": "CA271EAE-5FA8-4E80-8F08-2A302A95A959", "major": 1, "minor": 2}
        ]}
        """

    @Test func importAppendsOwnTracksWaypoints() throws {
        try write(Self.ownTracks, to: "waypoints.json")
        let result = try fences("import", "alice/phone", "waypoints.json")
        #expect(result.status == 0)
        #expect(result.output == "imported 2 fences (OwnTracks waypoints) into device \"alice/phone\", which now has 4\n")
        #expect(result.error == """
            warning: waypoints.json:4: waypoint "Desk" has no "lat", "lon", "rad", so it is not a circular region; skipped

            """)
        #expect(try fences("list", "--device", "alice/phone").output == """
            DEVICE       IDENTIFIER   EVENT           LAT      LON      RADIUS M  NOTE
            alice/phone  home         onEntryAndExit  52.52    13.405   100       Welcome home
            alice/phone  office       onExit          52.5163  13.3777  150       Left the office
            alice/phone  gym          onEntryAndExit  52.5     13.4     40        Gym
            alice/phone  kids-school  onEntryAndExit  52.51    13.41    80        Kids/School

            """)
    }

    @Test func importRefusesClashingIdentifiersUnlessReplacing() throws {
        try write(#"[{"identifier": "home", "latitude": 1, "longitude": 2, "radius": 10, "note": "", "eventType": "On Entry"}]"#, to: "app.json")
        let clash = try fences("import", "alice/phone", "app.json")
        #expect(clash.status == 1)
        #expect(clash.error == """
            error: device "alice/phone" already has a fence "home"; identifiers must be unique per device
            hint: --replace replaces the device's whole list with the file's fences

            """)
        #expect(try read() == Self.fences)

        let replaced = try fences("import", "alice/phone", "app.json", "--replace")
        #expect(replaced.status == 0)
        #expect(replaced.output == "imported 1 fence (the iOS app's geotifications) into device \"alice/phone\", replacing its list\n")
        #expect(try fences("list", "--device", "alice/phone", "--json").output == """
            {
              "devices": {
                "alice/phone": [
                  {
                    "eventType": "onEntry",
                    "identifier": "home",
                    "latitude": 1,
                    "longitude": 2,
                    "note": "",
                    "radius": 10
                  }
                ]
              }
            }

            """)
    }

    @Test func importOfAnUnreadableFileSaysWhatWasExpected() throws {
        try write(#"{"_type": "location", "lat": 1, "lon": 2}"#, to: "location.json")
        let unknown = try fences("import", "alice/phone", "location.json")
        #expect(unknown.status == 1)
        #expect(unknown.error.hasPrefix("error: location.json:1: not a list of fences: expected the iOS app's geotifications ("))
        #expect(unknown.error.hasSuffix("; found an object with \"_type\" \"location\"\n"))
        let missing = try fences("import", "alice/phone", "nope.json")
        #expect(missing.status == 1)
        #expect(missing.error == "error: nope.json: no such file\n")
        try write(#"[{"identifier": "x", "latitude": 1, "longitude": 2, "radius": 10, "eventType": "On Entry"}, {"identifier": "y"}]"#, to: "bad.json")
        let invalid = try fences("import", "bob", "bad.json")
        #expect(invalid.status == 1)
        #expect(invalid.error.hasPrefix("error: device \"bob\", fence \"y\": missing \"latitude\"\n"))
        #expect(try read() == Self.fences)
    }

    @Test func exportThenImportRoundTrips() throws {
        let exported = try fences("export", "alice/phone")
        try write(exported.output, to: "export.json")
        let imported = try fences("import", "bob/phone", "export.json")
        #expect(imported.status == 0)
        #expect(imported.output == "imported 2 fences (the iOS app's geotifications) into device \"bob/phone\", which now has 2\n")
        let alice = try fences("list", "--device", "alice/phone", "--json").output
        let bob = try fences("list", "--device", "bob/phone", "--json").output
        #expect(bob == alice.replacingOccurrences(of: "alice/phone", with: "bob/phone"))
    }

    /// The hint on what to pass follows only a fence file that is missing: one that is
    /// there but not valid gets its errors and no advice to name another file.
    @Test func anInvalidFenceFileGetsNoHintToNameAnother() throws {
        try write(#"{"fences": "broken.json"}"#, to: "settings.json")
        try write(#"{"devices": {"alice/phone": [{"identifier": "home"}]}}"#, to: "broken.json")
        let result = try runGeotify(["fences", "list", "--config", "settings.json"], in: directory)
        #expect(result.status == 1)
        #expect(result.error.contains("error: "), "\(result.error)")
        #expect(!result.error.contains("hint:"), "\(result.error)")
    }
}
