import Foundation
import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// The fences as a GeoJSON FeatureCollection (RFC 7946) for QGIS, geojson.io and the
/// like, and such a collection read back as a `FenceImportPlan`.
///
/// Each fence is a Feature whose `properties` are the fence in the fence file's form
/// (`identifier`, `note`, `eventType`, `latitude`/`longitude`/`radius` or `polygon`, its
/// rule overrides) plus its owner: `device`, or `shared` (`"shared"` for every device, or
/// a group's name). The geometry is what other tools draw: a polygon as it is, a circle
/// as a 64-sided polygon (on a sphere, which is within 0.5 % of the ellipsoid), each cut
/// at the ±180° meridian into a MultiPolygon when it crosses it. Reading prefers the
/// properties, so an export imports back unchanged; a feature made elsewhere is read
/// from its geometry (a Polygon, a one-part MultiPolygon, or a Point with a `radius`),
/// taking `identifier` (or `name`, or the feature's `id`), `note` (or `description`) and
/// `eventType` (default `onEntryAndExit`) from its properties and ignoring the rest
/// (`stroke`, `fill`, ...). A property whose value is null counts as not given, as GIS
/// tools write a column a feature has no value in.
package enum FenceGeoJSON {
    /// Vertices of a circle's polygon.
    static let circleVertices = 64

    /// The FeatureCollection of every fence in `book`: devices' own (devices sorted,
    /// file order within each), then shared sets (owners sorted).
    package static func export(_ book: FenceBook) -> JSON {
        var features: [JSON] = []
        for device in book.devices.keys.sorted() {
            for fence in book.fences(of: device) {
                features.append(feature(fence, owner: ("device", device), id: "\(device)/\(fence.identifier)"))
            }
        }
        for owner in book.shared.keys.sorted() {
            for fence in book.shared[owner]?.fences ?? [] {
                features.append(feature(fence, owner: ("shared", owner), id: "#\(owner)/\(fence.identifier)"))
            }
        }
        return ["type": "FeatureCollection", "features": .array(features)]
    }

    /// One fence as a Feature.
    static func feature(_ fence: Fence, owner: (key: String, value: String), id: String) -> JSON {
        var properties = JSONObject()
        properties[owner.key] = .string(owner.value)
        if case .object(let form) = FenceCodec.encode(fence) {
            properties.members += form.members
        }
        return ["type": "Feature", "id": .string(id), "geometry": geometry(of: fence.region), "properties": .object(properties)]
    }

    /// The region as a Polygon, or a MultiPolygon when it crosses ±180°.
    package static func geometry(of region: Region) -> JSON {
        let rings: [AntimeridianCut.Ring]
        switch region {
        case .circle(let center, let radius):
            rings = [circleRing(center: center, radius: radius)]
        case .polygon(let polygon):
            let reference = polygon.outer.first?.longitude ?? 0
            rings = ([polygon.outer] + polygon.holes).map { ring in
                ring.map { [unwrap($0.longitude, near: reference), $0.latitude] }
            }
        }
        let polygons = AntimeridianCut.polygons(rings).map { rings in
            JSON.array(rings.map { ring in JSON.array(closed(ring).map { JSON.array([.number(round($0[0])), .number(round($0[1]))]) }) })
        }
        if polygons.count == 1 {
            return ["type": "Polygon", "coordinates": polygons[0]]
        }
        return ["type": "MultiPolygon", "coordinates": .array(polygons)]
    }

    /// A circle's vertices (unwrapped against the centre's longitude), counter-clockwise
    /// as RFC 7946 asks of outer rings.
    static func circleRing(center: Coordinate, radius: Double) -> AntimeridianCut.Ring {
        let earth = 6_371_008.8
        let angular = radius / earth
        let latitude = center.latitude * .pi / 180
        let longitude = center.longitude * .pi / 180
        return (0..<circleVertices).map { step in
            let bearing = -2 * Double.pi * Double(step) / Double(circleVertices)
            let pointLatitude = asin(sin(latitude) * cos(angular) + cos(latitude) * sin(angular) * cos(bearing))
            let pointLongitude = longitude + atan2(
                sin(bearing) * sin(angular) * cos(latitude), cos(angular) - sin(latitude) * sin(pointLatitude))
            return [pointLongitude * 180 / .pi, pointLatitude * 180 / .pi]
        }
    }

    /// `longitude` shifted by whole turns to lie within 180° of `reference`.
    static func unwrap(_ longitude: Double, near reference: Double) -> Double {
        var value = longitude
        while value - reference > 180 { value -= 360 }
        while value - reference < -180 { value += 360 }
        return value
    }

    /// The ring with its first point repeated at the end, as GeoJSON rings are.
    static func closed(_ ring: AntimeridianCut.Ring) -> AntimeridianCut.Ring {
        guard let first = ring.first, ring.last != first else { return ring }
        return ring + [first]
    }

    /// Coordinates rounded to 7 decimals (1 cm), as geometry for drawing.
    static func round(_ value: Double) -> Double {
        (value * 1e7).rounded() / 1e7
    }

    // MARK: - Reading

    /// Reads a FeatureCollection (or one Feature) into a plan. Features without an owner
    /// go to `defaultDevice`; without one either, they are refused. Every problem is
    /// named by the feature's position; a member named twice in one object refuses the
    /// whole document (`duplicate_field`).
    package static func plan(parsing bytes: [UInt8], defaultDevice: String?, replace: Bool) throws(ConsoleRefusal) -> FenceImportPlan {
        let json: JSON
        do {
            json = try JSONParser(maxDepth: 32, rejectingDuplicateMembers: true).parse(bytes)
        } catch {
            // Two "geometry" or "properties" members would leave one of them unread, and
            // which one is each reader's choice: refused, as a command or position is.
            if let name = error.duplicateMember {
                throw ConsoleRefusal(.duplicateField, "the member \"\(name)\" is given more than once in one object (line \(error.line), column \(error.column)); give each member once")
            }
            throw ConsoleRefusal(.invalidJSON, "the body is not JSON: \(error)")
        }
        let features: [JSON]
        switch json["type"]?.stringValue {
        case "FeatureCollection":
            guard let list = json["features"]?.arrayValue else {
                throw ConsoleRefusal(.invalidImport, "a FeatureCollection needs a \"features\" array")
            }
            features = list
        case "Feature":
            features = [json]
        default:
            throw ConsoleRefusal(.invalidImport, "expected a GeoJSON FeatureCollection (or Feature), as /api/fences.geojson exports")
        }
        var plan = FenceImportPlan(replace: replace)
        var problems: [String] = []
        for (index, feature) in features.enumerated() {
            do throws(ConsoleRefusal) {
                let (owner, fence) = try read(feature, defaultDevice: defaultDevice)
                switch owner {
                case .device(let device): plan.devices[device, default: []].append(fence)
                case .shared(let set): plan.shared[set, default: []].append(fence)
                }
            } catch {
                problems.append("feature \(index + 1): \(error.message)")
            }
        }
        guard problems.isEmpty else { throw ConsoleRefusal(.invalidImport, problems.joined(separator: "; ")) }
        guard plan.count > 0 else { throw ConsoleRefusal(.invalidImport, "the collection holds no features") }
        return plan
    }

    /// Who a feature's fence belongs to.
    enum Owner: Equatable {
        case device(String)
        case shared(String)
    }

    /// One feature as a fence in the file's form, and its owner.
    static func read(_ feature: JSON, defaultDevice: String?) throws(ConsoleRefusal) -> (Owner, JSON) {
        guard case .object(let object) = feature, object["type"]?.stringValue == "Feature" else {
            throw ConsoleRefusal(.invalidImport, "not a GeoJSON Feature")
        }
        // A property that is null is not given: GIS tools (QGIS) write every column of a
        // layer into every feature, null where a feature has no value, so a layer with
        // both a "device" and a "shared" column names one of them in each feature.
        var properties = object["properties"]?.objectValue ?? JSONObject()
        properties.members.removeAll { $0.value == .null }
        let owner: Owner
        switch (properties["device"], properties["shared"]) {
        case (.some, .some):
            throw ConsoleRefusal(.invalidImport, "both a \"device\" and a \"shared\" property: a fence has one owner")
        case (.some(let device), nil):
            guard let device = device.stringValue else {
                throw ConsoleRefusal(.invalidImport, "\"device\" must be a device's name (user/device) as a string, not \(device.kindDescription)")
            }
            owner = .device(device)
        case (nil, .some(let set)):
            guard let set = set.stringValue else {
                throw ConsoleRefusal(.invalidImport, "\"shared\" must be a group's name (or \"shared\") as a string, not \(set.kindDescription)")
            }
            owner = .shared(set)
        case (nil, nil):
            guard let defaultDevice else {
                throw ConsoleRefusal(.invalidImport, "no \"device\" or \"shared\" property, and no ?device= to import it for")
            }
            owner = .device(defaultDevice)
        }
        var fence = JSONObject(properties.members.filter { FenceCodec.keys.contains($0.key) })
        if fence["identifier"] == nil {
            guard let name = properties["name"]?.stringValue ?? object["id"]?.stringValue else {
                throw ConsoleRefusal(.invalidImport, "no \"identifier\" (or \"name\") property")
            }
            fence["identifier"] = .string(name)
        }
        if fence["note"] == nil, let description = properties["description"]?.stringValue {
            fence["note"] = .string(description)
        }
        if fence["eventType"] == nil { fence["eventType"] = "onEntryAndExit" }
        let hasArea = fence["polygon"] != nil || (fence["latitude"] != nil && fence["longitude"] != nil)
        if !hasArea {
            try area(from: object["geometry"], into: &fence)
        }
        return (owner, .object(fence))
    }

    /// Fills in the fence's area from a feature's geometry.
    static func area(from geometry: JSON?, into fence: inout JSONObject) throws(ConsoleRefusal) {
        guard let geometry, let type = geometry["type"]?.stringValue, let coordinates = geometry["coordinates"] else {
            throw ConsoleRefusal(.invalidImport, "no geometry and no latitude/longitude or polygon property")
        }
        switch type {
        case "Point":
            guard let pair = coordinates.arrayValue, pair.count >= 2, let longitude = pair[0].numberValue, let latitude = pair[1].numberValue else {
                throw ConsoleRefusal(.invalidImport, "a Point needs [longitude, latitude]")
            }
            guard fence["radius"] != nil else {
                throw ConsoleRefusal(.invalidImport, "a Point is a circle only with a \"radius\" property (metres)")
            }
            fence["latitude"] = .number(latitude)
            fence["longitude"] = .number(longitude)
        case "Polygon":
            fence["polygon"] = openRings(coordinates)
            fence["radius"] = nil
        case "MultiPolygon":
            guard let parts = coordinates.arrayValue, parts.count == 1 else {
                throw ConsoleRefusal(.invalidImport, "a MultiPolygon of several parts cannot be one fence; import it as one Polygon per fence")
            }
            fence["polygon"] = openRings(parts[0])
            fence["radius"] = nil
        default:
            throw ConsoleRefusal(.invalidImport, "a \(type) cannot be a fence (a Polygon, or a Point with a radius)")
        }
    }

    /// GeoJSON rings without their closing point, as the fence file writes them.
    static func openRings(_ rings: JSON) -> JSON {
        guard let list = rings.arrayValue else { return rings }
        return .array(list.map { ring in
            guard var points = ring.arrayValue, points.count > 1, points.first == points.last else { return ring }
            points.removeLast()
            return .array(points)
        })
    }
}
