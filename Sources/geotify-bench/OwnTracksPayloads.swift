import Foundation
import GeotifyCore

/// OwnTracks location messages as the iOS and Android apps publish them: every field
/// the apps send (battery, connectivity, altitude, regions, ...), not just the ones
/// Geotify reads, since skipping those is part of the cost.
enum OwnTracksPayloads {
    /// The payload of a location at `coordinate` with `accuracy` metres, taken at `timestamp`.
    static func location(_ coordinate: Coordinate, accuracy: Double, timestamp: Double, variant: Int) -> [UInt8] {
        let lat = String(format: "%.7f", coordinate.latitude)
        let lon = String(format: "%.7f", coordinate.longitude)
        let acc = Int(accuracy)
        let tst = Int(timestamp)
        let text: String
        switch variant % 3 {
        case 0:
            text = #"{"_type":"location","acc":\#(acc),"alt":35,"batt":80,"bs":1,"conn":"w","created_at":\#(tst),"lat":\#(lat),"lon":\#(lon),"m":1,"tid":"ap","tst":\#(tst),"vac":3,"vel":0,"BSSID":"a4:2b:b0:12:34:56","SSID":"home-net","inregions":["home"],"inrids":["5f3a0c"],"topic":"owntracks/u\#(variant)/phone"}"#
        case 1:
            text = #"{"_type":"location","acc":\#(acc),"alt":212,"batt":57,"bs":1,"conn":"m","created_at":\#(tst),"lat":\#(lat),"lon":\#(lon),"t":"u","tid":"xq","tst":\#(tst),"vac":4,"vel":48}"#
        default:
            text = #"{"_type":"location","lat":\#(lat),"lon":\#(lon),"tst":\#(tst),"acc":\#(acc),"batt":91,"tid":"v7","conn":"m","t":"t"}"#
        }
        return Array(text.utf8)
    }
}
