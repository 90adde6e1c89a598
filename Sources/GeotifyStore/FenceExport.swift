import GeotifyCore
import GeotifyJSON

/// A device's fences written for use elsewhere: the forms `FenceImport` reads back.
public enum FenceExport {
    /// The fences as the iOS app's saved geotifications array: each fence in the fence
    /// file's form, with the app's own `"On Entry"` / `"On Exit"` for those event types
    /// so the app reads them. Fences the app cannot represent (a polygon, both entry and
    /// exit, dwelling, rule overrides) keep Geotify's form, so they still import back
    /// into Geotify unchanged.
    public static func appGeotifications(_ fences: [Fence]) -> JSON {
        .array(fences.map { fence in
            var object = FenceCodec.encode(fence).objectValue ?? JSONObject()
            switch fence.eventType {
            case .onEntry: object["eventType"] = "On Entry"
            case .onExit: object["eventType"] = "On Exit"
            default: break
            }
            return .object(object)
        })
    }

    /// The fences as an OwnTracks waypoints document, which the apps import as regions
    /// (a `.otrw` file; the same object `setWaypoints` carries):
    ///
    /// ```json
    /// {"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"Supermarket",
    ///   "lat":52.52,"lon":13.405,"rad":100,"tst":1487889774,"rid":"a1b2c3"}]}
    /// ```
    ///
    /// One `ownTracksWaypoint` per circular fence, in order; polygons have no OwnTracks
    /// equivalent and are left out (`skipped` names them).
    public static func ownTracksWaypoints(_ fences: [Fence]) -> (document: JSON, skipped: [String]) {
        let waypoints = fences.compactMap(ownTracksWaypoint)
        let skipped = fences.filter { ownTracksWaypoint($0) == nil }.map(\.identifier)
        return (["_type": "waypoints", "waypoints": .array(waypoints)], skipped)
    }

    /// The OwnTracks region of `fence` (https://owntracks.org/booklet/tech/json/,
    /// `_type=waypoint`), nil when it is not a circle:
    /// - `desc`: the fence's `name`, else its identifier: the name the app shows, puts
    ///   in `inregions` and in its transitions, and Home Assistant's OwnTracks
    ///   integration matches to a zone;
    /// - `rid`: the region ID it was imported with, else the identifier: the key the
    ///   apps merge regions by, stable across renames;
    /// - `lat`, `lon`; `rad` in whole metres, as the apps store it;
    /// - `tst`: `ownTracksCreationTime(of:)` of the identifier (required by the apps).
    public static func ownTracksWaypoint(_ fence: Fence) -> JSON? {
        guard case .circle(let center, let radius) = fence.region else { return nil }
        return [
            "_type": "waypoint",
            "desc": .string(fence.name ?? fence.identifier),
            "lat": .number(center.latitude),
            "lon": .number(center.longitude),
            "rad": .number(radius.rounded()),
            "tst": .number(Double(ownTracksCreationTime(of: fence.identifier))),
            "rid": .string(fence.regionID ?? fence.identifier),
        ]
    }

    /// The stand-in creation time of the fence `identifier`, in seconds since 1970: a
    /// stable hash of the identifier mapped into 2001-09-09 ... 2017-07-14, a plausible
    /// past date that is the same on every run and every device. OwnTracks uses it as the
    /// waypoint's `tst` and the transition's `wtst`; Geotify records no real creation time.
    public static func ownTracksCreationTime(of identifier: String) -> Int {
        1_000_000_000 + Int(StableHash.fnv1a(identifier) % 500_000_000)
    }
}
