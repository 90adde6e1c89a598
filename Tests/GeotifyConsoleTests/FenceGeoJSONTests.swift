import Foundation
import GeotifyConsole
import GeotifyCore
import GeotifyJSON
import GeotifyStore
import GeotifyTestSupport
import Synchronization
import Testing

@Suite struct FenceGeoJSONTests {
    static func book(_ text: String) throws -> FenceBook {
        try #require(FenceFile(path: "fences.json").parse(Array(text.utf8)).book)
    }

    @Test func aCircleIsAClosedPolygonWithItsRadiusAndCentreInTheProperties() throws {
        let book = try Self.book(ConsoleHarness.fences)
        let features = FenceGeoJSON.export(book)["features"]?.arrayValue ?? []
        let home = try #require(features.first { $0["properties"]?["identifier"] == "home" })
        #expect(home["id"] == "alice/phone/home")
        #expect(home["properties"]?["device"] == "alice/phone")
        #expect(home["properties"]?["radius"] == 100)
        #expect(home["properties"]?["latitude"] == 52.52)
        #expect(home["geometry"]?["type"] == "Polygon")
        let ring = try #require(home["geometry"]?["coordinates"]?.arrayValue?.first?.arrayValue)
        #expect(ring.count == 65)
        #expect(ring.first == ring.last)
        let distances = ring.compactMap { point -> Double? in
            guard let lon = point.arrayValue?[0].numberValue, let lat = point.arrayValue?[1].numberValue else { return nil }
            return Geodesy.distance(Coordinate(latitude: 52.52, longitude: 13.405), Coordinate(latitude: lat, longitude: lon))
        }
        #expect(distances.allSatisfy { abs($0 - 100) < 0.5 })
    }

    @Test func aPolygonKeepsItsHoles() throws {
        let features = FenceGeoJSON.export(try Self.book(ConsoleHarness.fences))["features"]?.arrayValue ?? []
        let park = try #require(features.first { $0["properties"]?["identifier"] == "park" })
        #expect(park["geometry"]?["coordinates"]?.arrayValue?.count == 2)
        #expect(park["properties"]?["polygon"]?.arrayValue?.count == 2)
    }

    @Test func shapesAcrossTheAntimeridianAreCutIntoAMultiPolygon() throws {
        let features = FenceGeoJSON.export(try Self.book(ConsoleHarness.fences))["features"]?.arrayValue ?? []
        let dateline = try #require(features.first { $0["properties"]?["identifier"] == "dateline" })
        #expect(dateline["properties"]?["shared"] == "family")
        #expect(dateline["geometry"]?["type"] == "MultiPolygon")
        let parts = dateline["geometry"]?["coordinates"]?.arrayValue ?? []
        #expect(parts.count == 2)
        for part in parts {
            let longitudes = part.arrayValue?.first?.arrayValue?.compactMap { $0.arrayValue?[0].numberValue } ?? []
            #expect(longitudes.allSatisfy { (-180...180).contains($0) })
        }
        let circle = FenceGeoJSON.geometry(of: .circle(center: Coordinate(latitude: 0, longitude: 179.9999), radius: 1000))
        #expect(circle["type"] == "MultiPolygon")
    }

    /// Exported shapes keep their points to 1 cm (seven decimals), and their rings run
    /// counterclockwise, as RFC 7946 asks of an outer ring; a shared fence's feature id
    /// is marked with `#`, so that it cannot be a device's fence of the same path.
    @Test func exportedShapesKeepTheirPointsToACentimetreAndRunCounterclockwise() throws {
        let square = FenceGeoJSON.geometry(of: .polygon(try Polygon(outer: [
            Coordinate(latitude: 52.51, longitude: 13.40012346), Coordinate(latitude: 52.51, longitude: 13.41),
            Coordinate(latitude: 52.52, longitude: 13.41), Coordinate(latitude: 52.52, longitude: 13.40),
        ])))
        #expect(square["coordinates"]?.arrayValue?.first?.arrayValue?.contains([13.4001235, 52.51]) == true)
        let circle = FenceGeoJSON.geometry(of: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100))
        let ring = (circle["coordinates"]?.arrayValue?.first?.arrayValue ?? []).compactMap { point -> (Double, Double)? in
            guard let x = point.arrayValue?[0].numberValue, let y = point.arrayValue?[1].numberValue else { return nil }
            return (x, y)
        }
        let twiceTheArea = zip(ring, ring.dropFirst()).reduce(0.0) { $0 + $1.0.0 * $1.1.1 - $1.1.0 * $1.0.1 }
        #expect(ring.count == 65 && twiceTheArea > 0, "counterclockwise: a positive area by the shoelace formula")
        let features = FenceGeoJSON.export(try Self.book(ConsoleHarness.fences))["features"]?.arrayValue ?? []
        let dateline = try #require(features.first { $0["properties"]?["identifier"] == "dateline" })
        #expect(dateline["id"] == "#family/dateline")
    }

    /// A shape whose first vertex is west of the meridian has its rings unwrapped below
    /// -180 (each edge shorter than 180°): it is cut all the same.
    @Test func aShapeReachingPastMinus180IsCut() throws {
        let parts = AntimeridianCut.polygons([[[-181, 0], [-179, 0], [-179, 2], [-181, 2]]])
        #expect(parts == [[[[179, 0], [180, 0], [180, 2], [179, 2]]], [[[-180, 0], [-179, 0], [-179, 2], [-180, 2]]]])
        let exported = FenceGeoJSON.geometry(of: .polygon(try Polygon(outer: [
            Coordinate(latitude: 0, longitude: -179.95), Coordinate(latitude: 0, longitude: 179.95),
            Coordinate(latitude: 1, longitude: 179.95), Coordinate(latitude: 1, longitude: -179.95),
        ])))
        #expect(exported["type"] == "MultiPolygon")
    }

    /// A hole on one side of the meridian goes with that side's part only, and a shape
    /// with an edge on the meridian is not given a part of no width on its other side.
    @Test func aCutKeepsHolesWithTheirSideAndMakesNoSliver() {
        let withHole = AntimeridianCut.polygons([
            [[179, 0], [182, 0], [182, 3], [179, 3]],
            [[180.5, 1], [181.5, 1], [181.5, 2], [180.5, 2]],
        ])
        #expect(withHole.count == 2)
        #expect(withHole.map(\.count) == [1, 2], "the west part has no hole; the east part has it")
        let edgeOnTheMeridian = AntimeridianCut.polygons([[[180, 0], [181, 0], [181, 1], [180, 1]]])
        #expect(edgeOnTheMeridian == [[[[-180, 0], [-179, 0], [-179, 1], [-180, 1]]]])
    }

    @Test func aShapeWithinRangeIsLeftAlone() {
        let rings: [AntimeridianCut.Ring] = [[[10, 0], [11, 0], [11, 1]]]
        #expect(AntimeridianCut.polygons(rings) == [rings])
    }

    @Test func theCutSplitsEdgesAtTheMeridian() {
        let parts = AntimeridianCut.polygons([[[179, 0], [181, 0], [181, 2], [179, 2]]])
        #expect(parts == [[[[179, 0], [180, 0], [180, 2], [179, 2]]], [[[-180, 0], [-179, 0], [-179, 2], [-180, 2]]]])
    }

    @Test func aMultiPolygonOfSeveralPartsIsNotOneFence() {
        let collection = """
            {"type":"Feature","properties":{"device":"a/b","identifier":"x"},"geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[5,5],[6,5],[6,6],[5,5]]]]}}
            """
        #expect(throws: ConsoleRefusal.self) { try FenceGeoJSON.plan(parsing: Array(collection.utf8), defaultDevice: nil, replace: false) }
    }

    /// Each way a body is not an import of fences is refused as `invalid_import` (or
    /// `invalid_json`), naming the feature and what is wrong with it, and all of a
    /// collection's problems at once.
    @Test(arguments: [
        ("[1]", "expected a GeoJSON FeatureCollection (or Feature), as /api/fences.geojson exports"),
        (#"{"type":"FeatureCollection","features":{}}"#, #"a FeatureCollection needs a "features" array"#),
        (#"{"type":"FeatureCollection","features":[]}"#, "the collection holds no features"),
        (#"{"type":"FeatureCollection","features":[7]}"#, "feature 1: not a GeoJSON Feature"),
        (#"{"type":"Feature","properties":{"identifier":"x"},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
         #"feature 1: no "device" or "shared" property, and no ?device= to import it for"#),
        (#"{"type":"Feature","properties":{"device":"a/b","radius":10},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
         #"feature 1: no "identifier" (or "name") property"#),
        (#"{"type":"Feature","properties":{"device":"a/b","name":"x"}}"#, "feature 1: no geometry and no latitude/longitude or polygon property"),
        (#"{"type":"Feature","properties":{"device":"a/b","name":"x","radius":10},"geometry":{"type":"Point","coordinates":[1]}}"#,
         "feature 1: a Point needs [longitude, latitude]"),
        (#"{"type":"Feature","properties":{"device":"a/b","name":"x"},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
         #"feature 1: a Point is a circle only with a "radius" property (metres)"#),
        (#"{"type":"Feature","properties":{"device":"a/b","name":"x"},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}"#,
         "feature 1: a LineString cannot be a fence (a Polygon, or a Point with a radius)"),
        (#"{"type":"Feature","properties":{"device":"a/b","shared":"family","name":"x","radius":10},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
         #"feature 1: both a "device" and a "shared" property: a fence has one owner"#),
        (#"{"type":"Feature","properties":{"device":7,"name":"x","radius":10},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
         #"feature 1: "device" must be a device's name (user/device) as a string, not a number"#),
        (#"{"type":"Feature","properties":{"shared":null,"name":"x","radius":10},"geometry":{"type":"Point","coordinates":[1,2]}}"#,
         #"feature 1: no "device" or "shared" property, and no ?device= to import it for"#),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature"},{"type":"Feature","properties":{"device":"a/b","name":"x"}}]}"#,
         #"feature 1: no "device" or "shared" property, and no ?device= to import it for; feature 2: no geometry and no latitude/longitude or polygon property"#),
    ])
    func whatIsNotAnImportOfFencesIsRefusedSayingWhy(body: String, message: String) {
        let refusal = #expect(throws: ConsoleRefusal.self) { try FenceGeoJSON.plan(parsing: Array(body.utf8), defaultDevice: nil, replace: false) }
        #expect(refusal == ConsoleRefusal(.invalidImport, message))
    }

    @Test func aBodyThatIsNotJSONIsRefusedAsSuch() {
        let refusal = #expect(throws: ConsoleRefusal.self) { try FenceGeoJSON.plan(parsing: Array("{".utf8), defaultDevice: nil, replace: false) }
        #expect(refusal?.code == .invalidJSON)
    }

    /// A member named twice in one object, at any depth (a feature's "geometry", its
    /// properties' "radius", the collection's "features"), refuses the whole import as
    /// `duplicate_field` naming it and where, instead of importing one of the two.
    @Test(arguments: [
        (#"{"type":"Feature","properties":{"identifier":"a","device":"d/p"},"geometry":{"type":"Point","coordinates":[1,2]},"#
            + #""geometry":{"type":"Point","coordinates":[3,4]}}"#, "geometry", 1),
        ("{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\n\"properties\":{\"identifier\":\"a\",\"radius\":50,\"radius\":5000},"
            + #""geometry":{"type":"Point","coordinates":[1,2]}}]}"#, "radius", 2),
        (#"{"type":"FeatureCollection","features":[],"features":[]}"#, "features", 1),
    ])
    func aMemberGivenTwiceRefusesTheImport(body: String, member: String, line: Int) {
        let refusal = #expect(throws: ConsoleRefusal.self) { try FenceGeoJSON.plan(parsing: Array(body.utf8), defaultDevice: "d/p", replace: false) }
        #expect(refusal?.code == .duplicateField)
        #expect(refusal?.message.hasPrefix("the member \"\(member)\" is given more than once in one object (line \(line), column ") == true, "\(refusal?.message ?? "")")
    }

    /// A MultiPolygon of one part is that polygon (tools that export every area as a
    /// MultiPolygon), its ring without the closing point; a Point with a radius is a
    /// circle; a feature without an owner goes to `?device=`.
    @Test func aMultiPolygonOfOnePartAndAPointWithARadiusAreFences() throws {
        let collection = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","properties":{"name":"park"},"geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]]]}},
              {"type":"Feature","properties":{"name":"home","radius":50},"geometry":{"type":"Point","coordinates":[13.4,52.5]}}]}
            """
        let plan = try FenceGeoJSON.plan(parsing: Array(collection.utf8), defaultDevice: "a/b", replace: false)
        let fences = try #require(plan.devices["a/b"])
        #expect(fences.count == 2 && plan.shared.isEmpty)
        #expect(fences[0]["polygon"] == [[[0, 0], [1, 0], [1, 1]]], "its one ring, open")
        #expect(fences[0]["identifier"] == "park" && fences[0]["eventType"] == "onEntryAndExit")
        #expect(fences[1]["latitude"] == 52.5 && fences[1]["longitude"] == 13.4 && fences[1]["radius"] == 50)
    }

    /// A layer exported from a GIS tool has every column in every feature, null where a
    /// feature has no value: a null property counts as not given, so one feature's owner
    /// is its `device` and the next one's its `shared` set, and a null `radius`, `note` or
    /// `identifier` leaves the geometry, the `description` and the `name` to be read.
    @Test func aNullPropertyIsNotGiven() throws {
        let collection = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","properties":{"device":"a/b","shared":null,"identifier":null,"name":"yard","radius":null,"note":null,
               "description":"the yard","eventType":null},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}},
              {"type":"Feature","properties":{"device":null,"shared":"family","identifier":"park","name":null,"radius":40,"note":"ours",
               "description":null,"eventType":"onEntry"},"geometry":{"type":"Point","coordinates":[13.4,52.5]}}]}
            """
        let plan = try FenceGeoJSON.plan(parsing: Array(collection.utf8), defaultDevice: nil, replace: false)
        let own = try #require(plan.devices["a/b"]?.first)
        #expect(own["identifier"] == "yard" && own["note"] == "the yard" && own["eventType"] == "onEntryAndExit")
        #expect(own["polygon"] == [[[0, 0], [1, 0], [1, 1], [0, 1]]] && own["radius"] == nil, "its one ring, not closed, kept whole")
        let shared = try #require(plan.shared["family"]?.first)
        #expect(shared["identifier"] == "park" && shared["note"] == "ours" && shared["eventType"] == "onEntry")
        #expect(shared["radius"] == 40 && shared["latitude"] == 52.5 && shared["longitude"] == 13.4 && shared["name"] == nil)
        #expect(plan.devices.count == 1 && plan.shared.count == 1)
    }

    /// What a feature drawn elsewhere may hold: its `id` as the identifier when it has no
    /// `identifier` or `name`; `note` before `description`; a geometry read when the
    /// properties hold only half a centre; a Polygon's `radius` property dropped (a fence
    /// is one or the other); a ring not closed kept whole.
    @Test func aFeatureDrawnElsewhereIsReadAsItsToolWroteIt() throws {
        let collection = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"pond","properties":{"radius":30},"geometry":{"type":"Point","coordinates":[13.4,52.5]}},
              {"type":"Feature","properties":{"name":"cafe","note":"ours","description":"theirs","radius":20},"geometry":{"type":"Point","coordinates":[13.41,52.51]}},
              {"type":"Feature","properties":{"name":"half","latitude":1,"radius":20},"geometry":{"type":"Point","coordinates":[13.42,52.52]}},
              {"type":"Feature","properties":{"name":"yard","radius":20},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}}]}
            """
        let plan = try FenceGeoJSON.plan(parsing: Array(collection.utf8), defaultDevice: "a/b", replace: false)
        let fences = try #require(plan.devices["a/b"])
        #expect(fences.map { $0["identifier"] } == ["pond", "cafe", "half", "yard"])
        #expect(fences[1]["note"] == "ours")
        #expect(fences[2]["latitude"] == 52.52 && fences[2]["longitude"] == 13.42)
        #expect(fences[3]["radius"] == nil)
        #expect(fences[3]["polygon"] == [[[0, 0], [1, 0], [1, 1], [0, 1]]], "not closed: every point kept")
        let (book, _) = try plan.apply(to: FenceBook(), file: FenceFile(path: "fences.json"))
        #expect(book.fences(of: "a/b").count == 4)
    }

    /// A body nested deeper than any GeoJSON of fences needs (32 levels; a MultiPolygon
    /// feature in a collection takes 8) is refused as `invalid_json`, as a fence command
    /// nested past its 16 is.
    @Test func aBodyNestedTooDeepIsRefusedAsNotJSON() {
        let body = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        let refusal = #expect(throws: ConsoleRefusal.self) { try FenceGeoJSON.plan(parsing: Array(body.utf8), defaultDevice: nil, replace: false) }
        #expect(refusal?.code == .invalidJSON)
    }

    /// The import's bound on the fence file is the file's size exactly: an import that
    /// makes it `maximumFenceFileBytes` long is taken, one byte more is refused.
    @Test func anImportMakingTheFileExactlyItsLimitIsTaken() throws {
        let book = try Self.book(ConsoleHarness.fences)
        let plan = FenceImportPlan(devices: ["new/dev": [["identifier": "only", "latitude": 52, "longitude": 13, "radius": 50, "eventType": "onEntry"]]], replace: false)
        let (imported, _) = try plan.apply(to: book, file: FenceFile(path: "fences.json"))
        let size = FenceFile(path: "fences.json").contents(of: imported).count
        #expect(try plan.apply(to: book, file: FenceFile(path: "fences.json", maximumBytes: size)).book.fences(of: "new/dev").count == 1)
        let refusal = #expect(throws: FenceChangeError.self) { try plan.apply(to: book, file: FenceFile(path: "fences.json", maximumBytes: size - 1)) }
        #expect(refusal?.code == .fenceLimit)
    }

    @Test func aPlanForManyDevicesMakesTheBookOnceNotOnceADevice() throws {
        let devices = Dictionary(uniqueKeysWithValues: (0..<200).map { index -> (String, [JSON]) in
            ("d\(index)", [["identifier": "a", "latitude": 0, "longitude": 1, "radius": 100, "eventType": "onEntry"]])
        })
        let plan = FenceImportPlan(devices: devices, replace: false)
        let file = FenceFile(path: "fences.json")
        let (book, _) = try plan.apply(to: FenceBook(), file: file)
        #expect(book.devices.count == 200)
        #expect(book.fences(of: "d199").map(\.identifier) == ["a"])
        // The devices' book and the file's check of it: rebuilt after each device, the
        // import cost the square of the devices it names.
        #expect(try plan.booksMade(applyingTo: FenceBook(), file: file) == 2)
    }

    @Test func aPlanRefusesWhatTheFenceFileWouldRefuse() throws {
        let book = try Self.book(ConsoleHarness.fences)
        let clash = FenceImportPlan(shared: ["shared": [["identifier": "home", "latitude": 1, "longitude": 1, "radius": 5, "eventType": "onEntry"]]], replace: false)
        #expect(throws: FenceChangeError.self) { try clash.apply(to: book, file: FenceFile(path: "fences.json")) }
        let unknownGroup = FenceImportPlan(shared: ["nobody": [["identifier": "z", "latitude": 1, "longitude": 1, "radius": 5, "eventType": "onEntry"]]], replace: false)
        #expect(throws: FenceChangeError.self) { try unknownGroup.apply(to: book, file: FenceFile(path: "fences.json")) }
    }

    /// Shared fences that are not valid fences are refused as `invalid_value`, every
    /// mistake named with its fence and set, and nothing of the set is taken.
    @Test func sharedFencesThatAreNotValidAreRefusedNamingEachMistake() throws {
        let book = try Self.book(ConsoleHarness.fences)
        let plan = FenceImportPlan(shared: ["shared": [
            ["identifier": "ok", "latitude": 1, "longitude": 1, "radius": 5, "eventType": "onEntry"],
            ["identifier": "north", "latitude": 95, "longitude": 1, "radius": 5, "eventType": "onEntry"],
            ["identifier": "when", "latitude": 1, "longitude": 1, "radius": 5, "eventType": "sometimes"],
        ]], replace: false)
        let error = #expect(throws: FenceChangeError.self) { try plan.apply(to: book, file: FenceFile(path: "fences.json")) }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.hasPrefix(#"shared fence "north" of shared: latitude 95 is outside -90...90; shared fence "when" of shared: unknown eventType "sometimes""#) == true,
                "\(String(describing: error?.message))")
    }

    /// A fence file deleted or moved while the bridge runs is not made again with the
    /// imported fences alone (every other device would lose its fences): the import is
    /// refused as a fence command is.
    @Test func anImportIntoAMissingFenceFileIsRefusedAndWritesNothing() throws {
        let directory = try makeTemporaryDirectory("import-missing")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("fences.json").path
        let plan = FenceImportPlan(devices: ["new/dev": [["identifier": "only", "latitude": 52, "longitude": 13, "radius": 50, "eventType": "onEntry"]]], replace: false)
        #expect {
            _ = try plan.write(to: FenceFile(path: path))
        } throws: { error in
            (error as? FenceChangeError)?.code == .invalidFile
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// An import is bounded by the limits of the fence file and of commands: more fences
    /// for a device than `maximumFencesPerDevice`, or a file larger than
    /// `maximumFenceFileBytes`, is refused as `fence_limit` and nothing is written.
    @Test func anImportPastTheFenceLimitsIsRefusedAsFenceLimitAndWritesNothing() throws {
        let directory = try makeTemporaryDirectory("import-limits")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("fences.json").path
        try ConsoleHarness.fences.write(toFile: path, atomically: true, encoding: .utf8)
        let before = try String(contentsOfFile: path, encoding: .utf8)
        func fences(_ count: Int) -> [JSON] {
            (0..<count).map { ["identifier": .string("f\($0)"), "latitude": 52, "longitude": 13, "radius": 50, "eventType": "onEntry"] }
        }
        let tooMany = FenceImportPlan(devices: ["new/dev": fences(21)], replace: false)
        #expect { _ = try tooMany.write(to: FenceFile(path: path)) } throws: { ($0 as? FenceChangeError)?.code == .fenceLimit }
        let large = FenceImportPlan(devices: ["new/dev": fences(20)], replace: false)
        let limited = FenceFile(path: path, maximumBytes: before.utf8.count + 500)
        #expect {
            _ = try large.write(to: limited)
        } throws: { error in
            (error as? FenceChangeError)?.code == .fenceLimit && (error as? FenceChangeError)?.message.contains("maximumFenceFileBytes") == true
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == before)
        #expect(try large.write(to: FenceFile(path: path)).fences == 20)
    }

    /// An import whose file cannot be written (here a device's file in a fence directory
    /// is a link into a directory that is gone; a full disk or a permission does the same)
    /// is refused as `io`, as a fence command is: `stale` says the file changed since it
    /// was read and to try again, which would fail again.
    @Test func anImportThatCannotBeWrittenIsRefusedAsIONotStale() throws {
        let directory = try makeTemporaryDirectory("import-unwritable")
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = directory.appendingPathComponent("fences").path
        try FileManager.default.createDirectory(atPath: root + "/devices", withIntermediateDirectories: true)
        let bob = FenceBook(devices: ["bob/phone": []])
        try Data(FenceFile.contents(of: bob)).write(to: URL(fileURLWithPath: root + "/devices/bob%2Fphone.json"))
        let alice = root + "/devices/alice%2Fphone.json"
        #expect(symlink(directory.appendingPathComponent("gone/alice.json").path, alice) == 0)
        let plan = FenceImportPlan(devices: ["alice/phone": [["identifier": "home", "latitude": 52, "longitude": 13, "radius": 50, "eventType": "onEntry"]]], replace: false)
        let error = #expect(throws: FenceChangeError.self) { _ = try plan.write(to: FenceFile(path: root)) }
        #expect(error?.code == .io, "\(String(describing: error))")
        #expect(error?.message.hasPrefix("write \(alice): cannot create a temporary file: ") == true, "\(String(describing: error))")
        #expect(error?.message.hasSuffix("; nothing was imported") == true, "\(String(describing: error))")
    }

    /// A fence in the fence file's JSON form, at `latitude`.
    static func fence(_ identifier: String, _ latitude: Double) -> JSON {
        ["identifier": .string(identifier), "latitude": .number(latitude), "longitude": 8, "radius": 100, "eventType": "onEntry"]
    }

    /// The text of a fence directory's file holding `root`, written as people write it
    /// (on one line), not as the bridge would.
    static func handWritten(_ root: JSON) -> String {
        JSONWriter().string(root)
    }

    /// A fence directory under `directory`: alice's and bob's files, each with a fence
    /// "home", and the shared "plaza", written by hand (`canonical` false) or as the
    /// bridge writes them; returns its path.
    static func makeFenceDirectory(in directory: URL, canonical: Bool) throws -> String {
        let root = directory.appendingPathComponent("fences").path
        if canonical {
            let book = try Self.book(handWritten([
                "devices": ["alice/phone": [fence("home", 50)], "bob/phone": [fence("home", 51)]],
                "shared": [fence("plaza", 40)],
            ]))
            _ = try FenceFile(path: root + "/").write(book, expecting: [])
            return root
        }
        try FileManager.default.createDirectory(atPath: root + "/devices", withIntermediateDirectories: true)
        try handWritten(["shared": [fence("plaza", 40)]]).write(toFile: root + "/shared.json", atomically: true, encoding: .utf8)
        for (device, latitude) in [("alice", 50.0), ("bob", 51.0)] {
            try handWritten(["devices": ["\(device)/phone": [fence("home", latitude)]]])
                .write(toFile: root + "/devices/\(device)%2Fphone.json", atomically: true, encoding: .utf8)
        }
        return root
    }

    /// Imports `plan` into the fence directory `root` while another writer holds the
    /// directory's lock: once the import waits for the lock, `meanwhile` changes the
    /// directory as that writer, which then lets go. Returns how the import ended.
    static func importWhileLocked(
        _ plan: FenceImportPlan, into root: String, meanwhile: () throws -> Void
    ) throws -> Result<FenceImportPlan.Outcome, FenceChangeError> {
        let holder = try DirectoryLockHolder(fenceDirectory: root)
        let result = Mutex<Result<FenceImportPlan.Outcome, FenceChangeError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let outcome = Result { () throws(FenceChangeError) in try plan.write(to: FenceFile(path: root)) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        // The import waits for the lock: at its read when it holds the lock from there,
        // at its write otherwise.
        let waited = waitUntil { holder.hasWaiter }
        try meanwhile()
        holder.release()
        #expect(waited, "the import waits for the directory's lock")
        #expect(done.wait(timeout: .now() + 10) == .success)
        return try #require(result.withLock { $0 })
    }

    /// An import into a fence directory reads it holding the lock the directory's
    /// writers take (on `devices/`) until it has written, as a fence command does: a
    /// device's fence that another writer adds while the import waits is read, and a
    /// shared fence of the same identifier refused, not written into `shared.json` next
    /// to it, where the directory would no longer load.
    @Test func aSharedImportIntoAFenceDirectoryHoldsItsLockFromItsReadToItsWrite() throws {
        let directory = try makeTemporaryDirectory("import-shared-locked")
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = try Self.makeFenceDirectory(in: directory, canonical: true)
        let plan = FenceImportPlan(shared: ["shared": [Self.fence("work", 60)]], replace: false)
        let outcome = try Self.importWhileLocked(plan, into: root) {
            try Self.handWritten(["devices": ["alice/phone": [Self.fence("home", 50), Self.fence("work", 61)]]])
                .write(toFile: root + "/devices/alice%2Fphone.json", atomically: true, encoding: .utf8)
        }
        let error = #expect(throws: FenceChangeError.self) { try outcome.get() }
        #expect(error?.code == .invalidValue && error?.message.contains("\"work\"") == true, "\(String(describing: error))")
        let loaded = FenceFile(path: root).load()
        #expect(loaded.errors.isEmpty, "\(loaded.errors)")
        #expect(loaded.book?.shared["shared"]?.fences.map(\.identifier) == ["plaza"])
        #expect(loaded.book?.fences(of: "alice/phone").map(\.identifier) == ["home", "work"])
    }

    /// The same for an import of a device's fences: a shared fence that another writer
    /// adds while the import waits is read, and the device's fence of the same identifier
    /// refused, not written into its file (`shared.json`, which the import does not
    /// write, is not among the files whose change a write refuses as `stale`).
    @Test func aDeviceImportIntoAFenceDirectoryHoldsItsLockFromItsReadToItsWrite() throws {
        let directory = try makeTemporaryDirectory("import-device-locked")
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = try Self.makeFenceDirectory(in: directory, canonical: true)
        let plan = FenceImportPlan(devices: ["alice/phone": [Self.fence("work", 60)]], replace: false)
        let outcome = try Self.importWhileLocked(plan, into: root) {
            try Self.handWritten(["shared": [Self.fence("plaza", 40), Self.fence("work", 61)]])
                .write(toFile: root + "/shared.json", atomically: true, encoding: .utf8)
        }
        let error = #expect(throws: FenceChangeError.self) { try outcome.get() }
        #expect(error?.code == .duplicateIdentifier, "\(String(describing: error))")
        let loaded = FenceFile(path: root).load()
        #expect(loaded.errors.isEmpty, "\(loaded.errors)")
        #expect(loaded.book?.fences(of: "alice/phone").map(\.identifier) == ["home"])
    }

    /// An import into a fence directory writes only the files of the owners it names:
    /// one of a device's fences leaves `shared.json` and the other devices' files as they
    /// were, byte for byte (as people wrote them), and one of shared fences every
    /// device's file.
    @Test func anImportIntoAFenceDirectoryWritesOnlyTheFilesOfTheOwnersItNames() throws {
        let directory = try makeTemporaryDirectory("import-directory-files")
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = try Self.makeFenceDirectory(in: directory, canonical: false)
        func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: root + "/" + name) }
        let (shared, alice, bob) = (bytes("shared.json"), bytes("devices/alice%2Fphone.json"), bytes("devices/bob%2Fphone.json"))
        let device = FenceImportPlan(devices: ["alice/phone": [Self.fence("work", 60)]], replace: false)
        #expect(try device.write(to: FenceFile(path: root)).fences == 1)
        #expect(bytes("shared.json") == shared, "shared.json is not rewritten")
        #expect(bytes("devices/bob%2Fphone.json") == bob, "another device's file is not rewritten")
        #expect(bytes("devices/alice%2Fphone.json") != alice)
        let sharedPlan = FenceImportPlan(shared: ["shared": [Self.fence("square", 41)]], replace: false)
        let (aliceAfter, bobAfter) = (bytes("devices/alice%2Fphone.json"), bytes("devices/bob%2Fphone.json"))
        #expect(try sharedPlan.write(to: FenceFile(path: root)).fences == 1)
        #expect(bytes("devices/alice%2Fphone.json") == aliceAfter, "no device's file is rewritten")
        #expect(bytes("devices/bob%2Fphone.json") == bobAfter, "no device's file is rewritten")
        let book = try #require(FenceFile(path: root).load().book)
        #expect(book.fences(of: "alice/phone").map(\.identifier) == ["home", "work"])
        #expect(book.shared["shared"]?.fences.map(\.identifier) == ["plaza", "square"])
    }

    /// An instance of several reads the files of other instances' devices whose names
    /// are hashed (`~<hash>-...`: the name does not say whose they are) and leaves their
    /// devices out of its book; its import leaves those files alone (rewriting every file
    /// that differed from its book, it removed them).
    @Test func anImportByOneInstanceLeavesTheFilesOfOtherInstancesDevices() throws {
        let directory = try makeTemporaryDirectory("import-shard")
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = try Self.makeFenceDirectory(in: directory, canonical: true)
        // A device of the other instance whose file name would be too long (its bytes
        // written as %XX), so hashed.
        let (shard, other) = try Self.otherInstancesDevice(in: root, hashed: true)
        let whole = FenceFile(path: root)
        let hashed = try FileManager.default.contentsOfDirectory(atPath: root + "/devices").filter { $0.hasPrefix("~") }
        try #require(hashed.count == 1)
        let plan = FenceImportPlan(devices: ["alice/phone": [Self.fence("work", 60)]], replace: false)
        #expect(try plan.write(to: FenceFile(path: root, shard: shard)).fences == 1)
        #expect(FileManager.default.fileExists(atPath: root + "/devices/" + hashed[0]), "the other instance's device keeps its file")
        #expect(try #require(whole.load().book).fences(of: other).map(\.identifier) == ["far"])
    }

    /// An import into a fence directory counts its files against `maximumFenceFileBytes`
    /// as a fence command does: as they are on disk, with the files it writes replaced.
    /// It counted every file as the bridge would write it, so in a directory of files
    /// written by hand (on one line) it refused as `fence_limit` a fence the same command
    /// adds.
    @Test func anImportIntoAFenceDirectoryCountsItsFilesAsACommandDoes() throws {
        let directory = try makeTemporaryDirectory("import-directory-size")
        defer { try? FileManager.default.removeItem(at: directory) }
        let importing = try Self.makeFenceDirectory(in: directory.appendingPathComponent("import"), canonical: false)
        let commanded = try Self.makeFenceDirectory(in: directory.appendingPathComponent("command"), canonical: false)
        let onDisk = try #require(try FenceFile(path: importing).read())
        // The size of the files once a command has added "work" to alice's fences.
        _ = try FenceFile(path: commanded).apply(.append(device: "alice/phone", fences: [Self.fence("work", 60)]), expecting: nil)
        let size = FenceFile(path: commanded).size(of: try #require(try FenceFile(path: commanded).read()))
        let plan = FenceImportPlan(devices: ["alice/phone": [Self.fence("work", 60)]], replace: false)
        let error = #expect(throws: FenceChangeError.self) { try plan.write(to: FenceFile(path: importing, maximumBytes: size - 1)) }
        #expect(error?.code == .fenceLimit && error?.message.contains("would be \(size) bytes") == true, "\(String(describing: error))")
        #expect(try FenceFile(path: importing).read() == onDisk, "nothing is written")
        #expect(try plan.write(to: FenceFile(path: importing, maximumBytes: size)).fences == 1)
        #expect(try FenceFile(path: importing).read() == FenceFile(path: commanded).read(), "written as the command writes it")
    }

    /// The instance of two that owns alice's phone, and a device of the other instance
    /// with its file in the fence directory `root`: a long name (hashed, `~<hash>-...`,
    /// which every instance reads) or a short one (which only its owner reads), holding
    /// the fence "far".
    static func otherInstancesDevice(in root: String, hashed: Bool) throws -> (shard: ShardAssignment, device: String) {
        let shard = try #require(try (0..<2).map { try ShardAssignment(index: $0, count: 2) }.first { $0.owns("alice/phone") })
        let name = hashed ? String(repeating: "é", count: 90) : "carol"
        let other = try #require((0..<100).lazy.map { "\(name)/\($0)" }.first { !shard.owns($0) })
        let whole = FenceFile(path: root)
        let loaded = whole.load()
        let far = try Self.book(Self.handWritten(["devices": [other: [Self.fence("far", 30)]]])).fences(of: other)
        _ = try whole.write(try #require(loaded.book).replacing(devices: [other: far]), expecting: loaded.contents, devices: [other])
        return (shard, other)
    }

    /// An instance of several refuses, all or none, an import naming a device another
    /// instance owns (`other_shard`, naming the device and its owner, as the console
    /// refuses its commands), and writes nothing: it answered that it imported that
    /// device's fences, but wrote none of them (the book the import is checked as, loaded
    /// as this instance loads the directory, leaves other instances' devices out), for
    /// a device with a file under a `~<hash>` name, one with a file it does not read and
    /// one without a file alike.
    @Test func anImportByOneInstanceNamingAnotherInstancesDeviceIsRefusedAsOtherShard() throws {
        let directory = try makeTemporaryDirectory("import-other-shard")
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = try Self.makeFenceDirectory(in: directory, canonical: true)
        let (shard, hashed) = try Self.otherInstancesDevice(in: root, hashed: true)
        let (_, plain) = try Self.otherInstancesDevice(in: root, hashed: false)
        let fileless = try #require((0..<100).lazy.map { "dave/\($0)" }.first { !shard.owns($0) })
        let whole = FenceFile(path: root)
        let before = try #require(try whole.read())
        let owner = 1 - shard.index
        for device in [hashed, plain, fileless] {
            for replace in [false, true] {
                let plan = FenceImportPlan(devices: ["alice/phone": [Self.fence("work", 60)], device: [Self.fence("near", 31)]], replace: replace)
                let error = #expect(throws: FenceChangeError.self) { try plan.write(to: FenceFile(path: root, shard: shard)) }
                #expect(error?.code == .otherShard, "\(device): \(String(describing: error))")
                #expect(error?.message.hasPrefix("\(device) belongs to another instance of the bridge (instance \(owner) of 2; this is instance \(shard.index))") == true)
                #expect(error?.message.hasSuffix("; nothing was imported") == true)
                #expect(try whole.read() == before, "nothing is written")
            }
        }
        let several = FenceImportPlan(devices: [plain: [Self.fence("near", 31)], fileless: [Self.fence("near", 31)]], replace: false)
        let error = #expect(throws: FenceChangeError.self) { try several.write(to: FenceFile(path: root, shard: shard)) }
        #expect(error?.message.hasSuffix("this is instance \(shard.index)), and 1 more of the import's devices belong to other instances: import their fences there; nothing was imported") == true, "\(String(describing: error))")
        let book = try #require(whole.load().book)
        #expect(book.fences(of: hashed).map(\.identifier) == ["far"])
        #expect(book.fences(of: plain).map(\.identifier) == ["far"])
        #expect(!book.knows(fileless))
    }

    /// An instance of several refuses to import shared fences into a fence directory
    /// (`read_only`), as no fence command of an instance writes `shared.json`: it reads
    /// only its own devices' files, so it wrote a shared fence of the identifier of
    /// another instance's device's fence, and the directory no longer loaded there.
    @Test func anImportOfSharedFencesByOneInstanceOfSeveralIsRefusedAsReadOnly() throws {
        let directory = try makeTemporaryDirectory("import-shard-shared")
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = try Self.makeFenceDirectory(in: directory, canonical: true)
        let (shard, other) = try Self.otherInstancesDevice(in: root, hashed: false)
        let whole = FenceFile(path: root)
        let before = try #require(try whole.read())
        for plan in [
            FenceImportPlan(devices: ["alice/phone": [Self.fence("work", 60)]], shared: ["shared": [Self.fence("square", 41)]], replace: true),
            FenceImportPlan(shared: ["shared": [Self.fence("far", 41)]], replace: false),
        ] {
            let error = #expect(throws: FenceChangeError.self) { try plan.write(to: FenceFile(path: root, shard: shard)) }
            #expect(error?.code == .readOnly, "\(String(describing: error))")
            #expect(error?.message.contains("read-only to each of the 2 instances") == true, "\(String(describing: error))")
            #expect(try whole.read() == before, "nothing is written")
        }
        let loaded = whole.load()
        #expect(loaded.errors.isEmpty, "\(loaded.errors)")
        #expect(loaded.book?.fences(of: other).map(\.identifier) == ["far"])
    }

    /// A single fence file is read-only to each of several instances (`read_only`), to an
    /// import as to a fence command: imported, it was rewritten by one of its readers.
    @Test func anImportIntoASingleFenceFileByOneInstanceOfSeveralIsRefusedAsReadOnly() throws {
        let directory = try makeTemporaryDirectory("import-shard-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("fences.json").path
        try ConsoleHarness.fences.write(toFile: path, atomically: true, encoding: .utf8)
        let before = try String(contentsOfFile: path, encoding: .utf8)
        let shard = try #require(try (0..<2).map { try ShardAssignment(index: $0, count: 2) }.first { $0.owns("new/dev") })
        let plan = FenceImportPlan(devices: ["new/dev": [Self.fence("only", 52)]], replace: false)
        let error = #expect(throws: FenceChangeError.self) { try plan.write(to: FenceFile(path: path, shard: shard)) }
        #expect(error?.code == .readOnly, "\(String(describing: error))")
        #expect(error?.message == "the fence file \(path) is read-only to each of the 2 instances that share the devices; change it by hand or with geotify fences, or use a fence directory (docs/scaling.md); nothing was imported")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == before)
        #expect(try plan.write(to: FenceFile(path: path, shard: ShardAssignment(index: 0, count: 1))).fences == 1, "one instance of one writes it")
    }

    @Test func anImportIntoAFenceFileKeepsTheOtherDevicesFences() throws {
        let directory = try makeTemporaryDirectory("import-present")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("fences.json").path
        try ConsoleHarness.fences.write(toFile: path, atomically: true, encoding: .utf8)
        let before = try #require(FenceFile(path: path).load().book)
        let plan = FenceImportPlan(devices: ["new/dev": [["identifier": "only", "latitude": 52, "longitude": 13, "radius": 50, "eventType": "onEntry"]]], replace: false)
        let outcome = try plan.write(to: FenceFile(path: path))
        let after = try #require(FenceFile(path: path).load().book)
        #expect(outcome.fences == 1)
        #expect(after.fences(of: "new/dev").map(\.identifier) == ["only"])
        #expect(after.devices.count == before.devices.count + 1)
    }
}
