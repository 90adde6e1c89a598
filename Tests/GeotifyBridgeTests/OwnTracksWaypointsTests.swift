import Testing
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

@Suite("OwnTracks waypoints")
struct OwnTracksWaypointsTests {
    let waypoints = OwnTracksWaypoints(topics: OwnTracksTopics())

    static func fence(_ identifier: String, radius: Double) -> Fence {
        Fence(identifier: identifier, region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: radius),
              note: "a note", eventType: .onEntry)
    }

    @Test func setWaypointsCarriesEachCircle() throws {
        let message = try #require(waypoints.command(for: "alice/phone", fences: [Self.fence("home", radius: 100.4)]))
        #expect(message.topic == "owntracks/alice/phone/cmd")
        #expect(message.qos == 1 && !message.retain)
        let tst = FenceExport.ownTracksCreationTime(of: "home")
        #expect(String(decoding: message.payload, as: UTF8.self) ==
            #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"home","lat":52.52,"lon":13.405,"rad":100,"tst":\#(tst),"rid":"home"}]}}"#)
    }

    @Test func removedFencesAreDeletedWithAnInvalidPosition() throws {
        let named = Fence(identifier: "shop", region: .circle(center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 80),
                          note: "", eventType: .onEntry, name: "Supermarket", regionID: "a1b2c3")
        let message = try #require(waypoints.command(
            for: "alice/phone", fences: [Self.fence("home", radius: 50)], removed: [Self.fence("office", radius: 10), named]))
        let list = try #require(try JSONParser().parse(message.payload)["waypoints"]?["waypoints"]?.arrayValue)
        #expect(list.count == 3)
        #expect(list[1]["desc"] == "office")
        #expect(list[2]["desc"] == "Supermarket" && list[2]["rid"] == "a1b2c3", "deleted under the name and region id the app knows")
        #expect(list[1]["lat"] == -1_000_000)
        #expect(list[1]["lon"] == -1_000_000)
        #expect(list[1]["tst"] == .number(Double(FenceExport.ownTracksCreationTime(of: "office"))))
        let tst = FenceExport.ownTracksCreationTime(of: "office")
        #expect(JSONWriter().string(list[1]) ==
            #"{"_type":"waypoint","desc":"office","lat":-1000000,"lon":-1000000,"rad":0,"tst":\#(tst),"rid":"office"}"#,
            "a whole waypoint, typed as one, that the app takes and then deletes")
    }

    @Test func nothingToSendOrNoOwnTracksTopicGivesNoCommand() {
        #expect(waypoints.command(for: "alice/phone", fences: []) == nil)
        #expect(waypoints.command(for: "van", fences: [Self.fence("depot", radius: 10)]) == nil)
    }

    @Test func aNamedImportedFenceIsPushedWithItsNameAndRegionID() throws {
        let fence = Fence(identifier: "supermarket", region: .circle(center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 80),
                          note: "", eventType: .onEntry, name: "Supermarket", regionID: "a1b2c3")
        let message = try #require(waypoints.command(for: "alice/phone", fences: [fence]))
        let waypoint = try #require(try JSONParser().parse(message.payload)["waypoints"]?["waypoints"]?.arrayValue?.first)
        #expect(waypoint["desc"] == "Supermarket")
        #expect(waypoint["rid"] == "a1b2c3")
    }
}
