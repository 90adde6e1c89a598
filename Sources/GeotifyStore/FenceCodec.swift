import GeotifyCore
import GeotifyJSON

/// Reads one fence from its JSON form and writes it back.
///
/// The form is the iOS app's saved geotification (`identifier`, `latitude`,
/// `longitude`, `radius`, `note`, `eventType`), so the app's exports import as they
/// are. Every problem is reported, not just the first; a radius outside the limits is
/// clamped with a warning rather than refused, as the app did.
public enum FenceCodec {
    /// What decoding one fence produced.
    public struct Decoded: Sendable {
        /// The fence, when there were no errors.
        public var fence: Fence?
        /// The identifier as written, when it was a string (for error messages).
        public var identifier: String?
        public var errors: [String]
        public var warnings: [String]
    }

    /// The keys a fence may have.
    public static let keys: Set<String> = ["identifier", "latitude", "longitude", "radius", "note", "eventType"]

    /// Decodes and validates one fence.
    public static func decode(_ json: JSON, limits: FenceLimits) -> Decoded {
        var errors: [String] = []
        var warnings: [String] = []
        guard case .object(let object) = json else {
            return Decoded(fence: nil, identifier: nil, errors: ["a fence must be an object, not \(json.kindDescription)"], warnings: [])
        }
        for key in object.keys where !keys.contains(key) {
            errors.append("unknown key \"\(key)\" (a fence has \(keys.sorted().joined(separator: ", ")))")
        }
        for key in object.duplicateKeys {
            errors.append("the key \"\(key)\" appears more than once")
        }

        let identifier = object["identifier"]?.stringValue
        switch object["identifier"] {
        case nil: errors.append("missing \"identifier\"")
        case .string(let text)?: if let problem = Identifier.problem(fence: text) { errors.append(problem) }
        case let other?: errors.append("\"identifier\" must be a string, not \(other.kindDescription)")
        }

        let latitude = number(object, "latitude", range: -90...90, errors: &errors)
        let longitude = number(object, "longitude", range: -180...180, errors: &errors)
        var radius = number(object, "radius", range: 0...Double.greatestFiniteMagnitude, errors: &errors)
        if let written = radius {
            let clamped = limits.clamp(radius: written)
            if clamped != written {
                warnings.append("radius \(JSONWriter.text(of: written)) m clamped to \(JSONWriter.text(of: clamped)) m (allowed \(JSONWriter.text(of: limits.minimumRadius))...\(JSONWriter.text(of: limits.maximumRadius)) m)")
                radius = clamped
            }
        }

        var note = ""
        switch object["note"] {
        case nil: break
        case .string(let text)?: note = text
        case let other?: errors.append("\"note\" must be a string, not \(other.kindDescription)")
        }

        var eventType: EventType?
        switch object["eventType"] {
        case nil: errors.append("missing \"eventType\" (one of \(EventType.canonicalNames.joined(separator: ", ")))")
        case .string(let name)?:
            eventType = EventType(name: name)
            if eventType == nil {
                errors.append("unknown eventType \"\(name)\" (one of \(EventType.canonicalNames.joined(separator: ", ")), or the app's \"On Entry\" / \"On Exit\")")
            }
        case let other?: errors.append("\"eventType\" must be a string, not \(other.kindDescription)")
        }

        guard errors.isEmpty, let identifier, let latitude, let longitude, let radius, let eventType else {
            return Decoded(fence: nil, identifier: identifier, errors: errors, warnings: warnings)
        }
        let fence = Fence(
            identifier: identifier,
            region: .circle(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius),
            note: note,
            eventType: eventType)
        return Decoded(fence: fence, identifier: identifier, errors: [], warnings: warnings)
    }

    /// The JSON form of `fence`, in the canonical spelling.
    public static func encode(_ fence: Fence) -> JSON {
        var object = JSONObject()
        object["identifier"] = .string(fence.identifier)
        switch fence.region {
        case .circle(let center, let radius):
            object["latitude"] = .number(center.latitude)
            object["longitude"] = .number(center.longitude)
            object["radius"] = .number(radius)
        }
        object["note"] = .string(fence.note)
        object["eventType"] = .string(fence.eventType.name)
        return .object(object)
    }

    private static func number(_ object: JSONObject, _ key: String, range: ClosedRange<Double>, errors: inout [String]) -> Double? {
        switch object[key] {
        case nil:
            errors.append("missing \"\(key)\"")
        case .number(let value)?:
            if range.contains(value) { return value }
            if key == "radius" {
                errors.append("radius \(JSONWriter.text(of: value)) must not be negative")
            } else {
                errors.append("\(key) \(JSONWriter.text(of: value)) is outside \(JSONWriter.text(of: range.lowerBound))...\(JSONWriter.text(of: range.upperBound))")
            }
        case let other?:
            errors.append("\"\(key)\" must be a number, not \(other.kindDescription)")
        }
        return nil
    }
}
