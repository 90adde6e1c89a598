import Foundation
import Testing
import GeotifyCore
import GeotifyJSON
@testable import GeotifyStore

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
            #"import.json:4: waypoint "Desk beacon" has no "lat", "lon", "rad", so it is not a circular region; skipped"#,
        ])
        let fences = try fences(imported)
        #expect(fences.map(\.identifier) == ["home", "work-office"])
        #expect(fences.map(\.name) == ["Home", "Work / Office"])
        #expect(fences.map(\.regionID) == ["f7676c", nil])
        #expect(fences.map(\.note) == ["Home", "Work / Office"])
        #expect(fences.map(\.isHome) == [true, false])
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
            "identifier": "paris-is-lovely", "name": "Paris is lovely", "latitude": 48.85833, "longitude": 2.29513, "radius": 50,
            "note": "Paris is lovely", "eventType": "onEntryAndExit",
        ]])
    }

    @Test func aConfigurationExportAndASingleWaypointAreRead() throws {
        let configuration = try parse("""
            {"_type": "configuration", "mode": 0, "waypoints": [{"_type": "waypoint", "desc": "Gym", "lat": 1, "lon": 2, "rad": 30, "tst": 1}]}
            """)
        #expect(try fences(configuration).map(\.identifier) == ["gym"])
        let single = try parse(#"{"_type": "waypoint", "desc": "Gym", "lat": 1, "lon": 2, "rad": 30, "tst": 1, "rid": "a1b2c3"}"#)
        #expect(try fences(single).map(\.identifier) == ["gym"])
        #expect(try fences(single).map(\.regionID) == ["a1b2c3"])
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
            #"import.json:3: waypoint #2: has neither "desc" nor "rid" with a letter or digit, so it has no name to make its identifier from"#,
            #"import.json:4: waypoint #3: is a "location" message, not a waypoint"#,
            #"import.json:5: waypoint #4: "desc" must be a string, not a number"#,
            #"import.json: waypoint #5 must be an object, not a string"#,
        ])
    }

    @Test func aStringThatIsNoFiniteNumberIsRefusedByTheImport() {
        let error = refusal(#"[{"_type": "waypoint", "desc": "Sea", "lat": "nan", "lon": " 2 ", "rad": "inf"}]"#)
        #expect(error?.code == .invalidImport)
        #expect(error?.problems.map(\.description) == [
            #"import.json:1: waypoint "Sea": "lat" must be a number, not the string "nan""#,
            #"import.json:1: waypoint "Sea": "rad" must be a number, not the string "inf""#,
        ])
    }

    @Test func theSupermarketKeepsItsNameAndRegionIDWithAReadableIdentifier() throws {
        let imported = try parse(#"[{"rid": "a1b2c3", "desc": "Supermarket", "lat": 52.5, "lon": 13.4, "rad": 80, "tst": 1610104395}]"#)
        let fence = try #require(try fences(imported).first)
        #expect(fence.identifier == "supermarket")
        #expect(fence.name == "Supermarket")
        #expect(fence.displayName == "Supermarket")
        #expect(fence.regionID == "a1b2c3")
        #expect(imported.warnings.isEmpty)
    }

    @Test func identifiersAreSlugsUniqueWithinTheFileAndStable() throws {
        let text = """
            [{"desc": "Café Zürich", "lat": 1, "lon": 2, "rad": 3},
             {"desc": "cafe  zurich!", "lat": 1, "lon": 2, "rad": 3},
             {"desc": "Café Zürich", "lat": 1, "lon": 2, "rad": 3},
             {"desc": "東京 駅", "lat": 1, "lon": 2, "rad": 3},
             {"desc": "***", "rid": " a+b#c/ d ", "lat": 1, "lon": 2, "rad": 3}]
            """
        let imported = try parse(text)
        let identifiers = imported.fences.compactMap { $0["identifier"]?.stringValue }
        #expect(identifiers == ["cafe-zurich", "cafe-zurich-2", "cafe-zurich-3", "東京-駅", "a-b-c-d"])
        #expect(imported.warnings.map(\.description) == [
            #"import.json:2: waypoint "cafe  zurich!": identifier "cafe-zurich-2", since an earlier waypoint has "cafe-zurich""#,
            #"import.json:3: waypoint "Café Zürich": identifier "cafe-zurich-3", since an earlier waypoint has "cafe-zurich""#,
        ])
        #expect(try parse(text).fences == imported.fences)
        #expect(try fences(imported).count == 5)
    }

    @Test func identifiersStayWithinTheLengthLimitAndOverlongNamesAreRefused() throws {
        #expect(FenceImport.slug(String(repeating: "A", count: 250)) == String(repeating: "a", count: 200))
        #expect(FenceImport.slug(String(repeating: "é", count: 150)) == String(repeating: "e", count: 150))
        #expect(FenceImport.numbered(String(repeating: "a", count: 200), 12) == String(repeating: "a", count: 197) + "-12")
        let long = try parse(#"[{"desc": "\#(String(repeating: "A", count: 250))", "lat": 1, "lon": 2, "rad": 3}]"#)
        #expect(throws: FenceChangeError.self) { try fences(long) }
    }

    /// A file to import (`geotify fences import`) is read as the fence file is, and refused
    /// with the codes the fence store gives the same faults: one larger than
    /// `maximumFenceFileBytes` as `fence_limit` (unread), one that is not a regular file
    /// as `invalid_import` (a FIFO is not waited on); only a file that cannot be read or
    /// is missing is `io`.
    @Test func aFileToImportIsRefusedWithTheCodeOfItsFault() throws {
        let directory = TemporaryDirectory()
        let text = #"[{"identifier": "home", "latitude": 52.5, "longitude": 13.4, "radius": 100, "eventType": "On Entry"}]"#
        let path = directory.write(text, to: "app.json")
        #expect(try FenceImport(contentsOf: path, maximumBytes: text.utf8.count).fences.count == 1)

        let large = #expect(throws: FenceChangeError.self) { try FenceImport(contentsOf: path, maximumBytes: text.utf8.count - 1) }
        #expect(large?.code == .fenceLimit)
        #expect(large?.message == "read \(path): the file is \(text.utf8.count) bytes; at most \(text.utf8.count - 1) are accepted (maximumFenceFileBytes, as for the fence file)")

        let fifo = directory.file("fifo.json")
        #expect(mkfifo(fifo, 0o600) == 0)
        let pipe = #expect(throws: FenceChangeError.self) { try FenceImport(contentsOf: fifo, maximumBytes: 1 << 20) }
        #expect(pipe?.code == .invalidImport)
        #expect(pipe?.message == "read \(fifo): not a regular file (a FIFO); only regular files are read")
        let folder = #expect(throws: FenceChangeError.self) { try FenceImport(contentsOf: directory.path, maximumBytes: 1 << 20) }
        #expect(folder?.code == .invalidImport)

        let missing = #expect(throws: FenceChangeError.self) { try FenceImport(contentsOf: directory.file("nope.json"), maximumBytes: 1 << 20) }
        #expect(missing?.code == .io)
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

    @Test func theOwnTracksExportIsAWaypointsDocumentThatImportsBack() throws {
        let book = FenceFile(path: "fences.json").parse(Array("""
            {"devices": {"d": [
              {"identifier": "supermarket", "name": "Supermarket", "rid": "a1b2c3", "latitude": 52.5, "longitude": 13.4, "radius": 80.4, "note": "Supermarket", "eventType": "onEntryAndExit"},
              {"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntry"},
              {"identifier": "park", "polygon": [[13.35, 52.51], [13.37, 52.51], [13.36, 52.52]], "eventType": "onEntry"}
            ]}}
            """.utf8)).book!
        let export = FenceExport.ownTracksWaypoints(book.fences(of: "d"))
        #expect(export.skipped == ["park"])
        let tst = FenceExport.ownTracksCreationTime(of: "supermarket")
        #expect(JSONWriter().string(export.document) == """
            {"_type":"waypoints","waypoints":[\
            {"_type":"waypoint","desc":"Supermarket","lat":52.5,"lon":13.4,"rad":80,"tst":\(tst),"rid":"a1b2c3"},\
            {"_type":"waypoint","desc":"home","lat":52.52,"lon":13.405,"rad":100,"tst":\(FenceExport.ownTracksCreationTime(of: "home")),"rid":"home"}]}
            """)
        let imported = try FenceImport(parsing: JSONWriter().bytes(export.document))
        #expect(imported.format == .ownTracksWaypoints)
        let fences = try fences(imported)
        #expect(fences.map(\.identifier) == ["supermarket", "home"])
        #expect(fences.map(\.name) == ["Supermarket", "home"])
        #expect(fences.map(\.regionID) == ["a1b2c3", "home"])
    }

    @Test func creationTimesAreStablePlausibleAndDistinct() {
        #expect(FenceExport.ownTracksCreationTime(of: "home") == 1_487_889_774)
        let times = ["home", "office", "gym", "depot", "school"].map(FenceExport.ownTracksCreationTime(of:))
        #expect(Set(times).count == times.count)
        #expect(times.allSatisfy { (1_000_000_000..<1_500_000_000).contains($0) })
    }
}
