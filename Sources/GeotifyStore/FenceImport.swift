import Foundation
import GeotifyCore
import GeotifyJSON

/// A file of fences made elsewhere, read into the fence file's JSON form so that
/// `FenceChange.append` / `.replaceAll` validate it like any other fence.
///
/// Two formats are read, told apart by their shape:
/// - the iOS app's saved geotifications, `[{"identifier", "latitude", "longitude",
///   "radius", "note", "eventType": "On Entry" | "On Exit"}]`: already the fence form,
///   taken as it is (and what `FenceExport.appGeotifications` writes);
/// - OwnTracks waypoints (regions), as the apps export them: `{"_type": "waypoints",
///   "waypoints": [...]}`, a configuration export `{"_type": "configuration",
///   "waypoints": [...]}`, a single `{"_type": "waypoint", ...}` or a bare array of
///   waypoints. Fields per https://owntracks.org/booklet/tech/json/ (`_type=waypoint`):
///   `desc` (name), `lat`, `lon`, `rad` (metres), `tst` (creation time), `rid` (region
///   ID). Older apps wrote `lat`/`lon`/`rad` as strings, which are read too.
///
/// An OwnTracks waypoint becomes a fence with the identifier from `rid` when it has one
/// (stable when the region is renamed in the app, and the ID OwnTracks' own transition
/// messages carry), else from `desc`, made a single topic level by replacing '/', '+',
/// '#' and control characters with '-'; `note` is `desc`; `radius` is `rad`; `eventType`
/// is `onEntryAndExit`, because OwnTracks reports both entering and leaving every
/// region. A waypoint without `lat`, `lon` and `rad` is not a circular region (OwnTracks
/// monitors only those; the rest are BLE beacons or plain places) and is skipped with a
/// warning.
public struct FenceImport: Sendable {
    /// The format a file was recognised as.
    public enum Format: Sendable, Equatable, CustomStringConvertible {
        case appGeotifications
        case ownTracksWaypoints

        /// The format's name, for messages.
        public var description: String {
            switch self {
            case .appGeotifications: "the iOS app's geotifications"
            case .ownTracksWaypoints: "OwnTracks waypoints"
            }
        }
    }

    /// The format the file was recognised as, for telling the person.
    public var format: Format
    /// The fences in the fence file's JSON form, not yet validated.
    public var fences: [JSON]
    /// Waypoints skipped, identifiers made usable: what the person should know.
    public var warnings: [FenceProblem]

    /// What the error for an unrecognised file says is expected.
    static let expected = """
        expected the iOS app's geotifications ([{"identifier": ..., "latitude": ..., "longitude": ..., \
        "radius": ..., "note": ..., "eventType": "On Entry"}, ...]) or an OwnTracks waypoints export \
        ({"_type": "waypoints", "waypoints": [...]}, or an array of {"_type": "waypoint", "desc": ..., \
        "lat": ..., "lon": ..., "rad": ...})
        """

    /// Reads `bytes`, recognising the format; `file` names the source in problems.
    /// Refuses with `invalid_import` a file that is not JSON, not a recognised format,
    /// has waypoint fields of the wrong type, or holds no fences at all (then with the
    /// reasons waypoints were skipped).
    public init(parsing bytes: [UInt8], file: String? = nil) throws(FenceChangeError) {
        let json: JSON
        do {
            json = try JSONParser().parse(bytes)
        } catch {
            throw FenceChangeError.invalid(.invalidImport, "", [
                FenceProblem(file: file, line: error.line, reason: "not valid JSON: \(error.reason) (column \(error.column))"),
            ])
        }
        switch json {
        case .array(let elements) where elements.first.map(Self.isWaypoint) == true:
            self = try Self.waypoints(elements, file: file)
        case .array(let elements):
            self.init(format: .appGeotifications, fences: elements, warnings: [])
        case .object(let object) where object["_type"] == "waypoint":
            self = try Self.waypoints([json], file: file)
        case .object(let object) where object["_type"] == "waypoints" || object["_type"] == "configuration":
            guard case .array(let elements)? = object["waypoints"] else {
                throw FenceChangeError.invalid(.invalidImport, "", [
                    FenceProblem(file: file, line: object.line, reason: "an OwnTracks \(object["_type"]?.stringValue ?? "") export without a \"waypoints\" array; \(Self.expected)"),
                ])
            }
            self = try Self.waypoints(elements, file: file)
        case .object(let object):
            let found = object["_type"].map { "an object with \"_type\" \(JSONWriter().string($0))" } ?? "an object without \"_type\""
            throw FenceChangeError.invalid(.invalidImport, "", [
                FenceProblem(file: file, line: object.line, reason: "not a list of fences: \(Self.expected); found \(found)"),
            ])
        default:
            throw FenceChangeError.invalid(.invalidImport, "", [
                FenceProblem(file: file, line: 1, reason: "not a list of fences: \(Self.expected); found \(json.kindDescription)"),
            ])
        }
        guard !fences.isEmpty else {
            throw FenceChangeError.invalid(.invalidImport, "", warnings + [FenceProblem(file: file, reason: "the file holds no fences to import")])
        }
    }

    /// The result of reading one of the formats.
    private init(format: Format, fences: [JSON], warnings: [FenceProblem]) {
        self.format = format
        self.fences = fences
        self.warnings = warnings
    }

    /// Whether `element` is shaped like an OwnTracks waypoint rather than a geotification.
    private static func isWaypoint(_ element: JSON) -> Bool {
        guard case .object(let object) = element else { return false }
        return ["_type", "desc", "lat", "lon", "rad", "rid"].contains { object[$0] != nil }
    }

    /// The fences for OwnTracks waypoints, refusing with every problem found.
    private static func waypoints(_ elements: [JSON], file: String?) throws(FenceChangeError) -> FenceImport {
        var fences: [JSON] = []
        var errors: [FenceProblem] = []
        var warnings: [FenceProblem] = []
        for (position, element) in elements.enumerated() {
            guard case .object(let waypoint) = element else {
                errors.append(FenceProblem(file: file, reason: "waypoint #\(position + 1) must be an object, not \(element.kindDescription)"))
                continue
            }
            var reader = WaypointReader(waypoint: waypoint, position: position, file: file)
            if let fence = reader.fence() { fences.append(fence) }
            errors += reader.errors
            warnings += reader.warnings
        }
        guard errors.isEmpty else { throw FenceChangeError.invalid(.invalidImport, "", errors) }
        return FenceImport(format: .ownTracksWaypoints, fences: fences, warnings: warnings)
    }

    /// Reads one OwnTracks waypoint, collecting its problems.
    private struct WaypointReader {
        let waypoint: JSONObject
        let position: Int
        let file: String?
        var errors: [FenceProblem] = []
        var warnings: [FenceProblem] = []

        init(waypoint: JSONObject, position: Int, file: String?) {
            self.waypoint = waypoint
            self.position = position
            self.file = file
        }

        /// How problems name the waypoint: by `desc`, else by position.
        var name: String {
            if case .string(let desc)? = waypoint["desc"], !desc.isEmpty { return "waypoint \"\(desc)\"" }
            return "waypoint #\(position + 1)"
        }

        /// The waypoint as a fence, or nil when it is skipped or has problems.
        mutating func fence() -> JSON? {
            if let type = waypoint["_type"], type != "waypoint" {
                problem("is \(type.stringValue.map { "a \"\($0)\" message" } ?? "marked \(JSONWriter().string(type))"), not a waypoint")
                return nil
            }
            let desc = text("desc")
            let rid = text("rid")
            let latitude = number("lat")
            let longitude = number("lon")
            let radius = number("rad")
            guard errors.isEmpty else { return nil }
            let missing = ["lat", "lon", "rad"].filter { waypoint[$0] == nil }
            guard missing.isEmpty, let latitude, let longitude, let radius else {
                warnings.append(FenceProblem(
                    file: file, line: waypoint.line,
                    reason: "\(name) has no \(missing.map { "\"\($0)\"" }.joined(separator: ", ")), so it is not a circular region; skipped"))
                return nil
            }
            let source = [rid, desc].compactMap { $0 }.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            guard let source else {
                problem("has neither \"rid\" nor \"desc\", so it has no name to be its identifier")
                return nil
            }
            let identifier = FenceImport.identifier(from: source)
            if identifier != source {
                warnings.append(FenceProblem(
                    file: file, line: waypoint.line,
                    reason: "\(name): identifier \"\(identifier)\" made from \"\(source)\" (a fence identifier is one topic level, without '/', '+', '#')"))
            }
            return [
                "identifier": .string(identifier), "latitude": .number(latitude), "longitude": .number(longitude),
                "radius": .number(radius), "note": .string(desc ?? ""), "eventType": "onEntryAndExit",
            ]
        }

        /// A string field, if present.
        mutating func text(_ key: String) -> String? {
            switch waypoint[key] {
            case nil: return nil
            case .string(let value)?: return value
            case let other?:
                problem("\"\(key)\" must be a string, not \(other.kindDescription)")
                return nil
            }
        }

        /// A number, or a string holding one as older OwnTracks versions wrote.
        mutating func number(_ key: String) -> Double? {
            switch waypoint[key] {
            case nil: return nil
            case .number(let value)?: return value
            case .string(let text)?:
                if let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite { return value }
                problem("\"\(key)\" must be a number, not the string \"\(text)\"")
                return nil
            case let other?:
                problem("\"\(key)\" must be a number, not \(other.kindDescription)")
                return nil
            }
        }

        /// Records an error about this waypoint.
        mutating func problem(_ reason: String) {
            errors.append(FenceProblem(file: file, line: waypoint.line, reason: "\(name): \(reason)"))
        }
    }

    /// `name` as a fence identifier: one topic level, without wildcards or control
    /// characters (replaced by '-'), surrounding spaces trimmed, at most
    /// `Identifier.maximumLength` bytes.
    static func identifier(from name: String) -> String {
        var identifier = ""
        for character in name.trimmingCharacters(in: .whitespaces) {
            let replaced: Character = "/+#".contains(character) || character.unicodeScalars.contains { $0.properties.generalCategory == .control }
                ? "-" : character
            guard identifier.utf8.count + replaced.utf8.count <= Identifier.maximumLength else { break }
            identifier.append(replaced)
        }
        return identifier
    }
}
