import GeotifyCore
import GeotifyJSON

/// A device's fences written for use elsewhere: the form `FenceImport` reads back.
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
}
