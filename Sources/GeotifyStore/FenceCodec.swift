import GeotifyCore
import GeotifyJSON

/// Reads one fence from its JSON form and writes it back.
///
/// The form is the iOS app's saved geotification (`identifier`, `latitude`,
/// `longitude`, `radius`, `note`, `eventType`), so the app's exports import as they
/// are, widened with a `polygon` area instead of a circle (GeoJSON order: `[[lon, lat],
/// ...]`, or a list of rings whose first is the outer one and the rest holes) and the
/// fence's overrides of the transition rules (`maximumAccuracy`, `accuracyAware`,
/// `hysteresis`, `minimumDuration`, `dwell`, `initialTrigger`), and three optional
/// labels: `name` (the display name, e.g. a Home Assistant zone's), `home` (true:
/// inside is home; absent, only the fence `home` is, which cannot say false) and `rid` (the OwnTracks
/// region ID it was imported with). Every problem is
/// reported, not just the first; a radius outside the limits is clamped with a warning
/// rather than refused, as the app did.
public enum FenceCodec {
    /// What decoding one fence produced.
    public struct Decoded: Sendable {
        /// The fence, when there were no errors.
        public var fence: Fence?
        /// The identifier as written, when it was a string (for error messages).
        public var identifier: String?
        /// Every reason the fence does not validate.
        public var issues: [FenceIssue]
        public var warnings: [String]

        /// The reasons as messages.
        public var errors: [String] { issues.map(\.message) }
    }

    /// The keys a fence may have: its own and the transition rules it may override.
    public static let keys: Set<String> = Set(
        ["identifier", "name", "home", "rid", "latitude", "longitude", "radius", "polygon", "note", "eventType"]
            + TransitionRule.allCases.map(\.rawValue))

    /// How many unknown keys of one fence are named, each with the keys a fence has; the
    /// rest are counted. Named each, a fence of thousands of unknown keys made an error
    /// 14 times its own size.
    static let unknownKeysNamed = 3

    /// Decodes and validates one fence.
    public static func decode(_ json: JSON, limits: FenceLimits) -> Decoded {
        guard case .object(let object) = json else {
            return Decoded(fence: nil, identifier: nil, issues: [FenceIssue(.wrongType, "a fence must be an object, not \(json.kindDescription)")], warnings: [])
        }
        var reader = Reader(object: object)
        let unknown = object.keys.filter { !keys.contains($0) }
        for key in unknown.prefix(unknownKeysNamed) {
            let hint = NameSuggestion.nearest(to: key, in: keys.sorted()).map { "did you mean \"\($0)\"? " } ?? ""
            reader.errors.append(FenceIssue(.unknownKey, "unknown key \"\(key)\" (\(hint)a fence has \(keys.sorted().joined(separator: ", ")))"))
        }
        if unknown.count > unknownKeysNamed {
            reader.errors.append(FenceIssue(.unknownKey, "and \(unknown.count - unknownKeysNamed) more unknown keys"))
        }
        for key in object.duplicateKeys {
            reader.errors.append(FenceIssue(.duplicateField, "the key \"\(key)\" appears more than once"))
        }

        let identifier = object["identifier"]?.stringValue
        switch object["identifier"] {
        case nil: reader.errors.append(FenceIssue(.missingField, "missing \"identifier\""))
        case .string(let text)?: if let problem = Identifier.problem(fence: text) { reader.errors.append(FenceIssue(.invalidValue, problem)) }
        case let other?: reader.errors.append(FenceIssue(.wrongType, "\"identifier\" must be a string, not \(other.kindDescription)"))
        }

        let name = reader.label("name")
        let home = reader.bool("home")
        if home == false, identifier == Fence.homeIdentifier {
            reader.errors.append(FenceIssue(.invalidValue, "the fence \"home\" is home by its identifier; give it another identifier rather than \"home\": false"))
        }
        let regionID = reader.label("rid")
        let region = reader.region(limits: limits)
        let note = reader.string("note") ?? ""
        if let character = ForbiddenCharacter.first(in: note) {
            reader.errors.append(FenceIssue(.invalidValue, "\"note\" must not contain control characters, non-characters or invalid UTF-8; found \(character)"))
        }
        let eventType = reader.eventType()
        var rules = FenceRules()
        for rule in TransitionRule.allCases {
            guard let value = object[rule.rawValue] else { continue }
            do {
                try rule.decode(value, into: &rules)
            } catch {
                reader.errors.append(error)
            }
        }

        guard reader.errors.isEmpty, let identifier, let region, let eventType else {
            return Decoded(fence: nil, identifier: identifier, issues: reader.errors, warnings: reader.warnings)
        }
        let fence = Fence(
            identifier: identifier, region: region, note: note, eventType: eventType, rules: rules,
            name: name, home: home, regionID: regionID)
        return Decoded(fence: fence, identifier: identifier, issues: [], warnings: reader.warnings)
    }

    /// The JSON form of `fence`, in the canonical spelling.
    public static func encode(_ fence: Fence) -> JSON {
        var object = JSONObject()
        object["identifier"] = .string(fence.identifier)
        if let name = fence.name { object["name"] = .string(name) }
        if let home = fence.home { object["home"] = .bool(home) }
        if let regionID = fence.regionID { object["rid"] = .string(regionID) }
        switch fence.region {
        case .circle(let center, let radius):
            object["latitude"] = .number(center.latitude)
            object["longitude"] = .number(center.longitude)
            object["radius"] = .number(radius)
        case .polygon(let polygon):
            let rings = ([polygon.outer] + polygon.holes).map { ring in
                JSON.array(ring.map { [.number($0.longitude), .number($0.latitude)] })
            }
            object["polygon"] = polygon.holes.isEmpty ? rings[0] : .array(rings)
        }
        object["note"] = .string(fence.note)
        object["eventType"] = fence.eventType.name.map(JSON.string) ?? .array(fence.eventType.names.map(JSON.string))
        for rule in TransitionRule.allCases {
            if let value = rule.encode(fence.rules) { object[rule.rawValue] = value }
        }
        return .object(object)
    }

    /// Typed reads of a fence object that collect every problem.
    private struct Reader {
        let object: JSONObject
        var errors: [FenceIssue] = []
        var warnings: [String] = []

        init(object: JSONObject) {
            self.object = object
        }

        mutating func number(_ key: String, range: ClosedRange<Double>, required: Bool) -> Double? {
            guard let value = object[key] else {
                if required { errors.append(FenceIssue(.missingField, "missing \"\(key)\"")) }
                return nil
            }
            do {
                return try JSONField.number(value, key: key, range: range)
            } catch {
                errors.append(error)
                return nil
            }
        }

        mutating func string(_ key: String) -> String? {
            guard let value = object[key] else { return nil }
            do {
                return try JSONField.string(value, key: key)
            } catch {
                errors.append(error)
                return nil
            }
        }

        /// A text people read (`name`, `rid`): not empty or only white space, at most
        /// `Identifier.maximumLength` bytes, without control characters.
        mutating func label(_ key: String) -> String? {
            guard let text = string(key) else { return nil }
            if text.allSatisfy(\.isWhitespace) {
                errors.append(FenceIssue(.invalidValue, "\"\(key)\" must not be empty (leave it out instead)"))
            } else if text.utf8.count > Identifier.maximumLength {
                errors.append(FenceIssue(.invalidValue, "\"\(key)\" must be at most \(Identifier.maximumLength) bytes"))
            } else if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                errors.append(FenceIssue(.invalidValue, "\"\(key)\" must not contain control characters (line breaks, tabs)"))
            } else {
                return text
            }
            return nil
        }

        mutating func bool(_ key: String) -> Bool? {
            guard let value = object[key] else { return nil }
            do {
                return try JSONField.bool(value, key: key)
            } catch {
                errors.append(error)
                return nil
            }
        }

        mutating func eventType() -> EventType? {
            let accepted = "one of \(EventType.canonicalNames.joined(separator: ", ")), or the app's \"On Entry\" / \"On Exit\"; several in an array"
            let names: [JSON]
            switch object["eventType"] {
            case nil:
                errors.append(FenceIssue(.missingField, "missing \"eventType\" (\(accepted))"))
                return nil
            case .string(let name)?:
                names = [.string(name)]
            case .array(let elements)? where !elements.isEmpty:
                names = elements
            case let other?:
                errors.append(FenceIssue(.wrongType, "\"eventType\" must be a string or a non-empty array of strings, not \(other.kindDescription)"))
                return nil
            }
            var eventType: EventType = []
            for name in names {
                guard case .string(let text) = name, let part = EventType(name: text) else {
                    let hint = name.stringValue.flatMap { NameSuggestion.nearest(to: $0, in: EventType.spellings.keys.sorted()) }
                    errors.append(FenceIssue(.invalidValue, "unknown eventType \(JSONWriter().string(name)) (\(hint.map { "did you mean \"\($0)\"? " } ?? "")\(accepted))"))
                    return nil
                }
                eventType.formUnion(part)
            }
            return eventType
        }

        /// A circle from latitude/longitude/radius, or a polygon; exactly one of the two.
        mutating func region(limits: FenceLimits) -> Region? {
            let circleKeys = ["latitude", "longitude", "radius"].filter { object[$0] != nil }
            if let polygon = object["polygon"] {
                guard circleKeys.isEmpty else {
                    errors.append(FenceIssue(.invalidValue, "a fence has either \"polygon\" or \"latitude\"/\"longitude\"/\"radius\", not both"))
                    return nil
                }
                return self.polygon(polygon)
            }
            let latitude = number("latitude", range: -90...90, required: true)
            let longitude = number("longitude", range: -180...180, required: true)
            guard var radius = number("radius", range: 0...Double.greatestFiniteMagnitude, required: true) else { return nil }
            let clamped = limits.clamp(radius: radius)
            if clamped != radius {
                warnings.append("radius \(JSONWriter.text(of: radius)) m clamped to \(JSONWriter.text(of: clamped)) m (allowed \(JSONWriter.text(of: limits.minimumRadius))...\(JSONWriter.text(of: limits.maximumRadius)) m)")
                radius = clamped
            }
            guard let latitude, let longitude else { return nil }
            return .circle(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius)
        }

        mutating func polygon(_ json: JSON) -> Region? {
            let shape = "\"polygon\" must be a ring [[lon, lat], ...] or a list of rings [[[lon, lat], ...], ...] (the first the outer, the rest holes)"
            guard case .array(let elements) = json, let first = elements.first else {
                errors.append(FenceIssue(.invalidValue, shape))
                return nil
            }
            let ringValues: [JSON] = first.arrayValue?.first?.arrayValue != nil ? elements : [json]
            var rings: [[Coordinate]] = []
            for ringValue in ringValues {
                guard let points = ringValue.arrayValue else {
                    errors.append(FenceIssue(.invalidValue, shape))
                    return nil
                }
                var ring: [Coordinate] = []
                for point in points {
                    guard let pair = point.arrayValue, pair.count == 2,
                          let longitude = pair[0].numberValue, let latitude = pair[1].numberValue
                    else {
                        errors.append(FenceIssue(.invalidValue, "\(shape); found \(JSONWriter().string(point))"))
                        return nil
                    }
                    ring.append(Coordinate(latitude: latitude, longitude: longitude))
                }
                rings.append(ring)
            }
            do {
                return .polygon(try Polygon(outer: rings[0], holes: Array(rings.dropFirst())))
            } catch {
                errors.append(FenceIssue(.invalidValue, "invalid polygon: \(error.message)"))
                return nil
            }
        }
    }
}
