import Foundation
import GeotifyConsole
import GeotifyCore
import GeotifyJSON
import GeotifyStore
import GeotifyTestSupport
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
