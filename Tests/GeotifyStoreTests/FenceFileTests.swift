import Foundation
import Testing
import GeotifyCore
import GeotifyStore

@Suite("Fence file")
struct FenceFileTests {
    let directory = TemporaryDirectory()

    func load(_ text: String, limits: FenceLimits = FenceLimits()) -> FenceFile.Loaded {
        FenceFile(path: directory.write(text, to: "fences.json"), limits: limits).load()
    }

    func messages(_ problems: [FenceProblem]) -> [String] {
        problems.map { $0.description.replacingOccurrences(of: directory.path + "/", with: "") }
    }

    @Test func aValidFileLoads() throws {
        let loaded = load("""
            { "devices": { "alice/phone": [
                { "identifier": "home", "latitude": 52.52, "longitude": 13.405,
                  "radius": 100, "note": "Welcome home", "eventType": "onEntry" } ] } }
            """)
        #expect(loaded.errors.isEmpty)
        let fence = try #require(loaded.book?.fences(of: "alice/phone").first)
        #expect(fence.identifier == "home")
        #expect(fence.note == "Welcome home")
        #expect(fence.eventType == .onEntry)
        #expect(fence.region == .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100))
    }

    @Test func aNameAHomeFlagAndARegionIDAreOptionalValidatedAndRoundTrip() throws {
        let loaded = load("""
            { "devices": { "alice/phone": [
                { "identifier": "house", "name": "Home", "home": true, "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntry" },
                { "identifier": "garden", "home": false, "rid": "f7676c", "latitude": 52.5, "longitude": 13.4, "radius": 50, "eventType": "onEntry" },
                { "identifier": "gym", "note": "Workout", "latitude": 52.5, "longitude": 13.4, "radius": 50, "eventType": "onEntry" },
                { "identifier": "desk", "latitude": 52.5, "longitude": 13.4, "radius": 50, "eventType": "onEntry" } ] } }
            """)
        #expect(loaded.errors.isEmpty)
        let fences = try #require(loaded.book?.fences(of: "alice/phone"))
        #expect(fences.map(\.name) == ["Home", nil, nil, nil])
        #expect(fences.map(\.isHome) == [true, false, false, false])
        #expect(fences.map(\.regionID) == [nil, "f7676c", nil, nil])
        #expect(fences.map(\.displayName) == ["Home", "garden", "Workout", "desk"])
        let file = FenceFile(path: directory.file("fences.json"))
        _ = try file.write(#require(loaded.book), expecting: loaded.contents)
        #expect(file.load().book == loaded.book)

        let bad = load("""
            { "devices": { "d": [
                { "identifier": "a", "name": " ", "home": "yes", "rid": 7, "latitude": 1, "longitude": 2, "radius": 5, "eventType": "onEntry" },
                { "identifier": "b", "name": "two\\nlines", "latitude": 1, "longitude": 2, "radius": 5, "eventType": "onEntry" },
                { "identifier": "home", "home": false, "latitude": 1, "longitude": 2, "radius": 5, "eventType": "onEntry" } ] } }
            """)
        #expect(messages(bad.errors) == [
            #"fences.json:2: device "d", fence "a": "name" must not be empty (leave it out instead)"#,
            #"fences.json:2: device "d", fence "a": "home" must be true or false, not a string"#,
            #"fences.json:2: device "d", fence "a": "rid" must be a string, not a number"#,
            #"fences.json:3: device "d", fence "b": "name" must not contain control characters (line breaks, tabs)"#,
            #"fences.json:4: device "d", fence "home": the fence "home" is home by its identifier; give it another identifier rather than "home": false"#,
        ])
    }

    @Test func theAppsSavedGeotificationsImportAsTheyAre() throws {
        // What the iOS app's GeotificationManager saved with JSONEncoder.
        let loaded = load("""
            {"devices": {"bob/iphone": [
              {"latitude":37.33233141,"longitude":-122.0312186,"radius":100,"identifier":"6B1F4E6E-3D6A-4C8B-9E0B-2C8E5B2D9F11","note":"Apple Park","eventType":"On Entry"},
              {"latitude":37.7749,"longitude":-122.4194,"radius":250,"identifier":"A8E3","note":"Left SF","eventType":"On Exit"}
            ]}}
            """)
        #expect(loaded.errors.isEmpty)
        #expect(loaded.book?.fences(of: "bob/iphone").map(\.eventType) == [.onEntry, .onExit])
    }

    @Test func everyProblemIsReportedWithLineDeviceFenceAndReason() {
        let loaded = load("""
            {
              "devices": {
                "alice/phone": [
                  { "identifier": "home", "latitude": 95, "longitude": "abc", "radius": 100, "eventType": "onEntry" },
                  { "identifier": "home", "latitude": 1, "longitude": 2, "radius": 100, "eventType": "sometimes" },
                  { "latitude": 1, "longitude": 2, "radius": -5, "eventType": "onExit", "nte": "typo" },
                  { "identifier": "home", "latitude": 1, "longitude": 2, "radius": 5, "eventType": "onExit" },
                  { "identifier": "a/b", "latitude": 1, "longitude": 2, "radius": 5, "eventType": "onExit" },
                  "not a fence"
                ],
                "bad//device": [],
                "van": {}
              }
            }
            """)
        #expect(loaded.book == nil)
        #expect(messages(loaded.errors) == [
            #"fences.json:4: device "alice/phone", fence "home": latitude 95 is outside -90...90"#,
            #"fences.json:4: device "alice/phone", fence "home": "longitude" must be a number, not a string"#,
            #"fences.json:5: device "alice/phone", fence "home": unknown eventType "sometimes" (one of onEntry, onExit, onEntryAndExit, onDwell, or the app's "On Entry" / "On Exit"; several in an array)"#,
            #"fences.json:5: device "alice/phone", fence "home": the identifier is used by another fence of this device; identifiers must be unique per device"#,
            #"fences.json:6: device "alice/phone", fence #3: unknown key "nte" (did you mean "note"? a fence has accuracyAware, dwell, eventType, home, hysteresis, identifier, initialTrigger, latitude, longitude, maximumAccuracy, minimumDuration, name, note, polygon, radius, rid)"#,
            #"fences.json:6: device "alice/phone", fence #3: missing "identifier""#,
            #"fences.json:6: device "alice/phone", fence #3: radius -5 must not be negative"#,
            #"fences.json:7: device "alice/phone", fence "home": the identifier is used by another fence of this device; identifiers must be unique per device"#,
            #"fences.json:8: device "alice/phone", fence "a/b": the fence identifier "a/b" must not contain '/', '+' or '#'"#,
            #"fences.json: device "alice/phone", fence #6: a fence must be an object, not a string"#,
            #"fences.json:2: the device identifier "bad//device" must not have empty topic levels (a leading, trailing or double '/')"#,
            #"fences.json:12: device "van": the fences of a device must be an array, not an object"#,
        ])
    }

    /// One fence with one mistake, and the one problem it is refused for.
    @Test(arguments: [
        (#""latitude": 1, "longitude": 2, "radius": 5, "polygon": [[8, 50], [9, 50], [9, 51]], "eventType": "onEntry""#,
         #"a fence has either "polygon" or "latitude"/"longitude"/"radius", not both"#),
        (#""latitude": 1, "longitude": 2, "radius": 5, "eventType": []"#,
         #""eventType" must be a string or a non-empty array of strings, not an array"#),
        (#""polygon": [[8, 50, 3], [9, 50, 3], [9, 51, 3]], "eventType": "onEntry""#,
         #""polygon" must be a ring [[lon, lat], ...] or a list of rings [[[lon, lat], ...], ...] (the first the outer, the rest holes); found [8,50,3]"#),
        // A ring or a list of rings is told by the first point's first element: a ring
        // whose first point ends in an array is a ring, with that point named.
        (#""polygon": [[8, [50, 1]], [9, 50], [9, 51]], "eventType": "onEntry""#,
         #""polygon" must be a ring [[lon, lat], ...] or a list of rings [[[lon, lat], ...], ...] (the first the outer, the rest holes); found [8,[50,1]]"#),
        (#""latitude": 1, "longitude": 2, "radius": 5, "radius": 50, "eventType": "onEntry""#,
         #"the key "radius" appears more than once"#),
        (#""latitude": 1, "radius": 5, "eventType": "onEntry""#, #"missing "longitude""#),
        (#""longitude": 1, "radius": 5, "eventType": "onEntry""#, #"missing "latitude""#),
        (#""latitude": 1, "longitude": 2, "eventType": "onEntry""#, #"missing "radius""#),
        (#""latitude": 1, "longitude": 2, "radius": 5"#,
         #"missing "eventType" (one of onEntry, onExit, onEntryAndExit, onDwell, or the app's "On Entry" / "On Exit"; several in an array)"#),
        (#""latitude": 1, "longitude": 2, "radius": 5, "eventType": ["onEntry", "onDwell"], "dwell": -60"#, "dwell -60 must not be negative"),
        (#""latitude": 1, "longitude": 2, "radius": 5, "eventType": "onEntry", "accuracyAware": "yes""#,
         #""accuracyAware" must be true or false, not a string"#),
        (#""latitude": 1, "longitude": 2, "radius": 5, "eventType": "onEntry", "initialTrigger": "always""#,
         #""initialTrigger" must be one of none, enter, exit, not "always""#),
        (#""name": "\#(String(repeating: "é", count: 100))x", "latitude": 1, "longitude": 2, "radius": 5, "eventType": "onEntry""#,
         #""name" must be at most 200 bytes"#),
        (#""polygon": 7, "eventType": "onEntry""#,
         #""polygon" must be a ring [[lon, lat], ...] or a list of rings [[[lon, lat], ...], ...] (the first the outer, the rest holes)"#),
        (#""polygon": [[[8, 50], [9, 50], [9, 51]], 5], "eventType": "onEntry""#,
         #""polygon" must be a ring [[lon, lat], ...] or a list of rings [[[lon, lat], ...], ...] (the first the outer, the rest holes)"#),
        (#""polygon": [[8, 50], [9, 50], [8, 50]], "eventType": "onEntry""#, "invalid polygon: The outer ring has 2 distinct vertices; a polygon ring needs at least 3."),
        (#""polygon": [[8, 95], [9, 50], [9, 51]], "eventType": "onEntry""#, "invalid polygon: Vertex 0 of the outer ring (latitude 95.0, longitude 8.0) is out of range: latitude must be in -90...90 and longitude in -180...180."),
        (#""polygon": [[0, 0], [1, 1], [1, 0], [0, 1]], "eventType": "onEntry""#, "invalid polygon: The edge from vertex 0 to vertex 1 of the outer ring and the edge from vertex 2 to vertex 3 of the outer ring cross or touch at latitude 0.5, longitude 0.5; edges may meet only where two neighbouring edges of a ring share their vertex."),
        (#""polygon": [[[0, 0], [4, 0], [4, 4], [0, 4]], [[1, 1], [2, 1]]], "eventType": "onEntry""#, "invalid polygon: Hole 0 has 2 distinct vertices; a polygon ring needs at least 3."),
    ])
    func aFenceWithOneMistakeIsRefusedForIt(members: String, reason: String) {
        let loaded = load(#"{"devices": {"d": [{"identifier": "f", \#(members)}]}}"#)
        #expect(loaded.book == nil)
        #expect(messages(loaded.errors) == [#"fences.json:1: device "d", fence "f": \#(reason)"#])
    }

    @Test func aNameOfExactlyTheMaximumLengthIsAccepted() throws {
        let name = String(repeating: "é", count: 100)
        #expect(name.utf8.count == Identifier.maximumLength)
        let loaded = load(#"{"devices": {"d": [{"identifier": "f", "name": "\#(name)", "latitude": 1, "longitude": 2, "radius": 5, "eventType": "onEntry"}]}}"#)
        #expect(loaded.errors.isEmpty)
        #expect(try #require(loaded.book).fences(of: "d").first?.name == name)
    }

    @Test func radiiAreClampedWithAWarning() throws {
        let loaded = load("""
            {"devices": {"d": [
              {"identifier": "tiny", "latitude": 0, "longitude": 0, "radius": 0, "eventType": "onEntry"},
              {"identifier": "huge", "latitude": 0, "longitude": 0, "radius": 250000, "eventType": "onEntry"}
            ]}}
            """)
        let book = try #require(loaded.book)
        #expect(book.fences(of: "d").map(\.region) == [
            .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 1),
            .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100_000),
        ])
        #expect(messages(loaded.warnings) == [
            #"fences.json:2: device "d", fence "tiny": radius 0 m clamped to 1 m (allowed 1...100000 m)"#,
            #"fences.json:3: device "d", fence "huge": radius 250000 m clamped to 100000 m (allowed 1...100000 m)"#,
        ])
    }

    @Test func theFenceLimitPerDeviceIsEnforced() {
        let fences = (1...3).map { #"{"identifier": "f\#($0)", "latitude": 0, "longitude": 0, "radius": 5, "eventType": "onEntry"}"# }
        let loaded = load(#"{"devices": {"d": [\#(fences.joined(separator: ","))]}}"#, limits: FenceLimits(maximumFencesPerDevice: 2))
        #expect(messages(loaded.errors) == [#"fences.json:1: device "d": 3 fences, but a device may have at most 2"#])
    }

    @Test func theDefaultLimitIsTwenty() {
        let fences = (1...21).map { #"{"identifier": "f\#($0)", "latitude": 0, "longitude": 0, "radius": 5, "eventType": "onEntry"}"# }
        #expect(load(#"{"devices": {"d": [\#(fences.dropLast().joined(separator: ","))]}}"#).errors.isEmpty)
        #expect(load(#"{"devices": {"d": [\#(fences.joined(separator: ","))]}}"#).errors.count == 1)
    }

    @Test(arguments: [
        ("{\n  \"devices\": {\n    \"a\": [,]\n  }\n}", "fences.json:3: not valid JSON: unexpected character ',', expected a JSON value (column 11)"),
        ("[]", "fences.json:1: the file must hold a JSON object with \"devices\", not an array"),
        ("{}", "fences.json:1: missing \"devices\" (an object of device identifier → array of fences)"),
        ("{\"devices\": {}, \"zones\": []}", "fences.json:1: unknown top-level key \"zones\" (expected \"devices\", \"groups\" or \"shared\")"),
        ("{\"devices\": []}", "fences.json:1: \"devices\" must be an object, not an array"),
        ("{\"devices\": {}, \"groups\": []}", "fences.json:1: \"groups\" must be an object of group name → array of devices, not an array"),
        ("{\"devices\": {}, \"shared\": {}}", "fences.json:1: \"shared\" must be an array of fences, not an object"),
        ("", "fences.json:1: not valid JSON: the text is empty, expected a JSON value (column 1)"),
    ])
    func malformedFilesAreRefused(text: String, message: String) {
        let loaded = load(text)
        #expect(loaded.book == nil)
        #expect(messages(loaded.errors) == [message])
    }

    @Test("devices read as the parser streams them: problems in the file's order, a repeated device named first, the last \"devices\" counts, nothing kept from a file that is not JSON")
    func devicesAreMadeAsTheyAreRead() {
        let circle = #"{"identifier": "f", "latitude": 0, "longitude": 0, "radius": 5, "eventType": "onEntry"}"#
        let twice = load(#"{"zones": 1, "devices": {"a": [\#(circle)], "x+y": [], "b": 7, "a": [\#(circle)]}}"#)
        #expect(twice.book == nil)
        #expect(messages(twice.errors) == [
            "fences.json:1: unknown top-level key \"zones\" (expected \"devices\", \"groups\" or \"shared\")",
            "fences.json:1: device \"a\": the device appears more than once",
            "fences.json:1: the device identifier \"x+y\" must not contain '+' or '#'",
            "fences.json:1: device \"b\": the fences of a device must be an array, not a number",
        ])
        let last = load(#"{"devices": {"a": [\#(circle)]}, "devices": {"b": [\#(circle)]}}"#)
        #expect(last.errors.isEmpty)
        #expect(last.book.map { Array($0.devices.keys) } == ["b"])
        let lastEmpty = load(#"{"devices": {"a": [\#(circle)]}, "devices": {}}"#)
        #expect(lastEmpty.book?.devices.isEmpty == true)
        let broken = load(#"{"devices": {"a": [\#(circle)], "b": [{"identifier": 1}]}, "x": ]}"#)
        #expect(broken.book == nil)
        #expect(messages(broken.errors) == ["fences.json:1: not valid JSON: unexpected character ']', expected a JSON value (column 142)"])
    }

    @Test func aFileOfExactlyTheMaximumSizeLoadsAndOneByteMoreIsRefused() {
        let text = #"{"devices": {"d": []}}"#
        let path = directory.write(text, to: "fences.json")
        let size = text.utf8.count
        let exact = FenceFile(path: path, maximumBytes: size).load()
        #expect(exact.errors.isEmpty)
        #expect(exact.book?.devices.keys.sorted() == ["d"])
        let over = FenceFile(path: path, maximumBytes: size - 1).load()
        #expect(over.book == nil)
        #expect(messages(over.errors) == ["fences.json: the file is \(size) bytes; at most \(size - 1) are accepted (maximumFenceFileBytes)"])
    }

    @Test func aMissingFileIsAClearError() {
        let loaded = FenceFile(path: directory.file("nope.json")).load()
        #expect(messages(loaded.errors) == ["nope.json: no such file"])
    }

    @Test func writesAreAtomicReadableAndRoundTrip() throws {
        let loaded = load("""
            {"devices": {"b": [{"identifier": "x", "latitude": 1.5, "longitude": 2, "radius": 5, "eventType": "On Exit", "note": "é"}],
                         "a": [{"identifier": "y", "latitude": -1, "longitude": 179.5, "radius": 50.25, "eventType": "onEntryAndExit"}]}}
            """)
        let book = try #require(loaded.book)
        let file = FenceFile(path: directory.file("fences.json"))
        let written = try file.write(book, expecting: loaded.contents)
        #expect(String(decoding: written, as: UTF8.self) == """
            {
              "devices": {
                "a": [
                  {
                    "eventType": "onEntryAndExit",
                    "identifier": "y",
                    "latitude": -1,
                    "longitude": 179.5,
                    "note": "",
                    "radius": 50.25
                  }
                ],
                "b": [
                  {
                    "eventType": "onExit",
                    "identifier": "x",
                    "latitude": 1.5,
                    "longitude": 2,
                    "note": "é",
                    "radius": 5
                  }
                ]
              }
            }

            """)
        let reloaded = file.load()
        #expect(reloaded.book == book)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["fences.json"])
    }

    @Test func aWriteIsRefusedWhenSomeoneElseChangedTheFile() throws {
        let loaded = load(#"{"devices": {}}"#)
        let file = FenceFile(path: directory.file("fences.json"))
        _ = directory.write(#"{"devices": {"hand": []}}"#, to: "fences.json")
        let error = #expect(throws: StoreError.self) { try file.write(FenceBook(), expecting: loaded.contents) }
        #expect(error?.code == .stale, "a refusal, not a failure to write")
        #expect(String(decoding: try #require(FileManager.default.contents(atPath: file.path)), as: UTF8.self) == #"{"devices": {"hand": []}}"#)
    }
}

@Suite("Fence file groups and shared fences")
struct SharedFenceFileTests {
    let directory = TemporaryDirectory()

    func load(_ text: String) -> FenceFile.Loaded {
        FenceFile(path: directory.write(text, to: "fences.json")).load()
    }

    static let fence = #""latitude": 1, "longitude": 2, "radius": 50, "eventType": "onEntryAndExit""#

    @Test func sharedFencesForEveryoneAndForAGroupRoundTrip() throws {
        let loaded = load("""
            {"devices": {"alice/phone": [{"identifier": "home", \(Self.fence)}]},
             "groups": {"family": ["alice/phone", "bob/phone"]},
             "shared": [{"identifier": "office", \(Self.fence)}, {"identifier": "school", \(Self.fence), "group": "family"}]}
            """)
        #expect(loaded.errors.isEmpty)
        let book = try #require(loaded.book)
        #expect(book.shared["shared"]?.fences.map(\.identifier) == ["office"])
        #expect(book.shared["family"]?.fences.map(\.identifier) == ["school"])
        #expect(book.groups == ["family": ["alice/phone", "bob/phone"]])
        let rewritten = FenceFile(path: directory.file("copy.json")).parse(FenceFile.contents(of: book))
        #expect(rewritten.book == book)
        #expect(String(decoding: FenceFile.contents(of: book), as: UTF8.self).contains(#""group": "family""#))
    }

    @Test func mistakesAreNamed() {
        let loaded = load("""
            {"devices": {"alice/phone": [{"identifier": "office", \(Self.fence)}]},
             "groups": {"shared": ["x"], "team": "alice/phone", "a/b": []},
             "shared": [{"identifier": "office", \(Self.fence)}, {"identifier": "gym", \(Self.fence), "group": "nobody"},
                        {"identifier": "gym", \(Self.fence), "group": 5}]}
            """)
        #expect(loaded.book == nil)
        let messages = loaded.errors.map(\.reason)
        #expect(messages.contains(#""shared" cannot be a group name: it names the fences shared with every device"#))
        #expect(messages.contains(#"group "team" must be an array of device identifiers"#))
        #expect(messages.contains { $0.hasPrefix(#"group "a/b": the group name "a/b" must not contain"#) })
        #expect(messages.contains(#"the group "nobody" is not defined in "groups""#))
        #expect(messages.contains(#""group" must be the name of a group, not a number"#))
        #expect(messages.contains("the identifier is also a fence shared with every device, which applies to this device; identifiers must be unique per device"))
    }

    @Test func aDevicesOwnFenceMayNotShareAnIdentifierWithItsGroupsSet() {
        let loaded = load("""
            {"devices": {"alice/phone": [{"identifier": "school", \(Self.fence)}], "carol/phone": [{"identifier": "school", \(Self.fence)}]},
             "groups": {"family": ["alice/phone", "bob/phone"]},
             "shared": [{"identifier": "school", \(Self.fence), "group": "family"}]}
            """)
        #expect(loaded.book == nil)
        // Only alice is in the group; carol's own "school" is hers alone.
        #expect(loaded.errors.map { "\($0.device ?? "-") \($0.fence ?? "-"): \($0.reason)" } == [
            #"alice/phone school: the identifier is also a fence shared with the group "family", which applies to this device; identifiers must be unique per device"#,
        ])
    }

    @Test func aDevicesOwnFenceCannotNameAGroup() {
        let loaded = load("""
            {"devices": {"alice/phone": [{"identifier": "school", \(Self.fence), "group": "family"}]},
             "groups": {"family": ["alice/phone"]}}
            """)
        #expect(loaded.book == nil)
        #expect(loaded.errors.count == 1)
        #expect(loaded.errors.first?.reason.hasPrefix(#"unknown key "group" ("#) == true)
        #expect(loaded.errors.first?.device == "alice/phone")
    }

    @Test func aGroupListingAnUnusableDeviceIsRefused() {
        let loaded = load("""
            {"devices": {}, "groups": {"family": ["alice/phone", "bob//phone", "eve/#"]}}
            """)
        #expect(loaded.book == nil)
        #expect(loaded.errors.map(\.reason) == [
            #"group "family": the device identifier "bob//phone" must not have empty topic levels (a leading, trailing or double '/')"#,
            #"group "family": the device identifier "eve/#" must not contain '+' or '#'"#,
        ])
    }
}
