import Testing
import GeotifyCore
import GeotifyJSON
import GeotifyStore

@Suite("Fence import and export")
struct FenceImportTests {
    func parse(_ text: String) throws(FenceChangeError) -> FenceImport {
        try FenceImport(parsing: Array(text.utf8), file: "import.json")
    }

    func refusal(_ text: String) -> FenceChangeError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    /// The imported fences as a device's list, validated as a change validates them.
    func fences(_ imported: FenceImport) throws -> [Fence] {
        try FenceChange.replaceAll(device: "d", fences: imported.fences).apply(to: FenceBook(), limits: FenceLimits()).book.fences(of: "d")
    }

    @Test func theAppsSavedGeotificationsAreTakenAsTheyAre() throws {
        // What the iOS app's GeotificationManager saved with JSONEncoder.
        let imported = try parse("""
            [{"latitude":37.33233141,"longitude":-122.0312186,"radius":100,"identifier":"6B1F4E6E-3D6A-4C8B-9E0B-2C8E5B2D9F11","note":"Apple Park","eventType":"On Entry"},
             {"latitude":37.7749,"longitude":-122.4194,"radius":250,"identifier":"A8E3","note":"Left SF","eventType":"On Exit"}]
            """)
        #expect(imported.format == .appGeotifications)
        #expect(imported.warnings.isEmpty)
        let fences = try fences(imported)
        #expect(fences.map(\.identifier) == ["6B1F4E6E-3D6A-4C8B-9E0B-2C8E5B2D9F11", "A8E3"])
        #expect(fences.map(\.eventType) == [.onEntry, .onExit])
        #expect(fences.map(\.note) == ["Apple Park", "Left SF"])
        #expect(fences[1].region == .circle(center: Coordinate(latitude: 37.7749, longitude: -122.4194), radius: 250))
    }

    @Test func anOwnTracksWaypointsExportBecomesFences() throws {
        // As the iOS app exports its regions (booklet, _type=waypoints), with a BLE beacon region.
        let imported = try parse("""
            {"_type": "waypoints", "_creator": "OwnTracks iOS 17.1.1", "waypoints": [
              {"_type": "waypoint", "desc": "Home", "lat": 52.52, "lon": 13.405, "rad": 100, "tst": 1610104395, "rid": "f7676c"},
              {"_type": "waypoint", "desc": "Work / Office", "lat": 52.5163, "lon": 13.3777, "rad": 150, "tst": 1610104400},
              {"_type": "waypoint", "desc": "Desk beacon", "tst": 1610104500, "uuid": "CA271EAE-5FA8-4E80-8F08-2A302A95A959", "major": 1, "minor": 2}
            ]}
            """)
        #expect(imported.format == .ownTracksWaypoints)
        #expect(imported.warnings.map(\.description) == [
            #"import.json:3: waypoint "Work / Office": identifier "Work - Office" made from "Work / Office" (a fence identifier is one topic level, without '/', '+', '#')"#,
            #"import.json:4: waypoint "Desk beacon" has no "lat", "lon", "rad", so it is not a circular region; skipped"#,
        ])
        let fences = try fences(imported)
        #expect(fences.map(\.identifier) == ["f7676c", "Work - Office"])
        #expect(fences.map(\.note) == ["Home", "Work / Office"])
        #expect(fences.map(\.eventType) == [[.onEntry, .onExit], [.onEntry, .onExit]])
        #expect(fences[0].region == .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100))
    }

    @Test func aBareArrayOfWaypointsWithNumbersAsStringsIsRead() throws {
        // The booklet's example payload: older apps wrote lat, lon and rad as strings.
        let imported = try parse("""
            [{"_type": "waypoint", "desc": "Paris is lovely", "lat": "48.858330", "lon": "2.295130", "rad": "50", "tst": "1385997757"}]
            """)
        #expect(imported.format == .ownTracksWaypoints)
        #expect(imported.fences == [[
            "identifier": "Paris is lovely", "latitude": 48.85833, "longitude": 2.29513, "radius": 50,
            "note": "Paris is lovely", "eventType": "onEntryAndExit",
        ]])
    }

    @Test func aConfigurationExportAndASingleWaypointAreRead() throws {
        let configuration = try parse("""
            {"_type": "configuration", "mode": 0, "waypoints": [{"_type": "waypoint", "desc": "Gym", "lat": 1, "lon": 2, "rad": 30, "tst": 1}]}
            """)
        #expect(try fences(configuration).map(\.identifier) == ["Gym"])
        let single = try parse(#"{"_type": "waypoint", "desc": "Gym", "lat": 1, "lon": 2, "rad": 30, "tst": 1, "rid": "a1b2c3"}"#)
        #expect(try fences(single).map(\.identifier) == ["a1b2c3"])
    }

    @Test func valuesOutOfRangeAreLeftToTheFenceValidation() throws {
        let imported = try parse(#"[{"desc": "North", "lat": 95, "lon": 0, "rad": 10}]"#)
        #expect(throws: FenceChangeError.self) { try fences(imported) }
    }

    @Test(arguments: [
        ("{\n  \"waypoints\": [,]\n}", #"import.json:2: not valid JSON: unexpected character ',', expected a JSON value (column 17)"#),
        ("42", #"import.json:1: not a list of fences: \#(FenceImportTests.expected); found a number"#),
        (#"{"_type": "location", "lat": 1, "lon": 2}"#, #"import.json:1: not a list of fences: \#(FenceImportTests.expected); found an object with "_type" "location""#),
        (#"{"devices": {}}"#, #"import.json:1: not a list of fences: \#(FenceImportTests.expected); found an object without "_type""#),
        (#"{"_type": "waypoints"}"#, #"import.json:1: an OwnTracks waypoints export without a "waypoints" array; \#(FenceImportTests.expected)"#),
        (#"[]"#, "import.json: the file holds no fences to import"),
    ])
    func anUnrecognisedFileIsRefusedSayingWhatWasExpected(text: String, message: String) {
        let error = refusal(text)
        #expect(error?.code == .invalidImport)
        #expect(error?.problems.map(\.description) == [message])
    }

    @Test func aFileOfWaypointsThatAreNotRegionsSaysWhyNothingIsImported() {
        let error = refusal(#"[{"_type": "waypoint", "desc": "Beacon", "tst": 1, "uuid": "CA271EAE-5FA8-4E80-8F08-2A302A95A959"}]"#)
        #expect(error?.code == .invalidImport)
        #expect(error?.problems.map(\.description) == [
            #"import.json:1: waypoint "Beacon" has no "lat", "lon", "rad", so it is not a circular region; skipped"#,
            "import.json: the file holds no fences to import",
        ])
    }

    static let expected = """
        expected the iOS app's geotifications ([{"identifier": ..., "latitude": ..., "longitude": ..., \
        "radius": ..., "note": ..., "eventType": "On Entry"}, ...]) or an OwnTracks waypoints export \
        ({"_type": "waypoints", "waypoints": [...]}, or an array of {"_type": "waypoint", "desc": ..., \
        "lat": ..., "lon": ..., "rad": ...})
        """

    @Test func badWaypointFieldsAreAllReported() {
        let error = refusal("""
            {"_type": "waypoints", "waypoints": [
              {"_type": "waypoint", "desc": "Home", "lat": true, "lon": "east", "rad": 100},
              {"_type": "waypoint", "lat": 1, "lon": 2, "rad": 3},
              {"_type": "location", "lat": 1, "lon": 2},
              {"_type": "waypoint", "desc": 7, "rid": "r1", "lat": 1, "lon": 2, "rad": 3},
              "Gym"
            ]}
            """)
        #expect(error?.code == .invalidImport)
        #expect(error?.problems.map(\.description) == [
            #"import.json:2: waypoint "Home": "lat" must be a number, not a Boolean"#,
            #"import.json:2: waypoint "Home": "lon" must be a number, not the string "east""#,
            #"import.json:3: waypoint #2: has neither "rid" nor "desc", so it has no name to be its identifier"#,
            #"import.json:4: waypoint #3: is a "location" message, not a waypoint"#,
            #"import.json:5: waypoint #4: "desc" must be a string, not a number"#,
            #"import.json: waypoint #5 must be an object, not a string"#,
        ])
    }

    @Test func identifiersAreMadeOneTopicLevelOfUsableLength() throws {
        let imported = try parse(#"[{"desc": "Gate", "rid": " a+b#c/\td ", "lat": 1, "lon": 2, "rad": 3}]"#)
        #expect(imported.fences.first?["identifier"] == "a-b-c--d")
        let long = String(repeating: "é", count: 150)
        let truncated = try parse(#"[{"desc": "\#(long)", "lat": 1, "lon": 2, "rad": 3}]"#)
        #expect(truncated.fences.first?["identifier"]?.stringValue == String(repeating: "é", count: 100))
        #expect(try fences(truncated).count == 1)
    }

    @Test func exportWritesTheAppsArrayAndImportReadsItBack() throws {
        let book = FenceFile(path: "fences.json").parse(Array("""
            {"devices": {"d": [
              {"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "Welcome home", "eventType": "onEntry"},
              {"identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150.5, "eventType": "On Exit"},
              {"identifier": "both", "latitude": -33.9, "longitude": 151.2, "radius": 20, "note": "Sydney", "eventType": "onEntryAndExit"}
            ]}}
            """.utf8)).book!
        let exported = JSONWriter(pretty: true, sortedKeys: true).bytes(FenceExport.appGeotifications(book.fences(of: "d")))
        #expect(String(decoding: exported, as: UTF8.self).hasPrefix("""
            [
              {
                "eventType": "On Entry",
                "identifier": "home",
                "latitude": 52.52,
                "longitude": 13.405,
                "note": "Welcome home",
                "radius": 100
              },
              {
                "eventType": "On Exit",
            """))
        let imported = try FenceImport(parsing: exported)
        #expect(imported.format == .appGeotifications)
        #expect(try fences(imported) == book.fences(of: "d"))
    }
}
