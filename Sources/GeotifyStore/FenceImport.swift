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
/// An OwnTracks waypoint `{"desc":"Supermarket","rid":"a1b2c3",...}` becomes the fence
/// `supermarket` named `Supermarket` with `rid` `a1b2c3`: `name` (the display name, which
/// Home Assistant and Geotify's own OwnTracks transitions show) is `desc`; the identifier
/// is a readable slug of `desc` (`slug(_:)`: lower case, accents dropped, every run of
/// other characters one `-`), else of `rid` when `desc` has no letters or digits, made
/// unique within the file with `-2`, `-3`... in file order, so importing the same file
/// again gives the same identifiers; `rid` is kept, so exports and transitions carry the
/// ID the app knows the region by; `note` is `desc`; `radius` is `rad`; `eventType` is
/// `onEntryAndExit`, because OwnTracks reports both entering and leaving every region. A
/// waypoint without `lat`, `lon` and `rad` is not a circular region (OwnTracks monitors
/// only those; the rest are BLE beacons or plain places) and is skipped with a warning.
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

    /// The fences of the file at `path` (`geotify fences import FILE`), read as the fence
    /// file is and parsed as `init(parsing:file:)` parses them. The file must be a regular
    /// file of at most `maximumBytes` (the fence file's `maximumFenceFileBytes`: the fences
    /// have to fit in it); larger, it is refused unread as `fence_limit`, as a change that
    /// would take the fence file past it is; a FIFO, a device or a directory as
    /// `invalid_import`, as a file that is not a list of fences is; a missing or
    /// unreadable file as `io`.
    package init(contentsOf path: String, maximumBytes: Int) throws(FenceChangeError) {
        let read: [UInt8]?
        do {
            read = try AtomicFile.read(
                path, maximumBytes: maximumBytes, limitName: "maximumFenceFileBytes, as for the fence file",
                tooLargeCode: .fenceLimit, notRegularCode: .invalidImport)
        } catch {
            throw FenceChangeError(error.code ?? .io, error.description)
        }
        guard let bytes = read else { throw FenceChangeError(.io, "\(path): no such file") }
        try self.init(parsing: bytes, file: path)
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
        var identifiers: Set<String> = []
        for (position, element) in elements.enumerated() {
            guard case .object(let waypoint) = element else {
                errors.append(FenceProblem(file: file, reason: "waypoint #\(position + 1) must be an object, not \(element.kindDescription)"))
                continue
            }
            var reader = WaypointReader(waypoint: waypoint, position: position, file: file)
            if let fence = reader.fence(taken: &identifiers) { fences.append(fence) }
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

        /// The waypoint as a fence, or nil when it is skipped or has problems; its
        /// identifier is not one of `taken`, and is added to it.
        mutating func fence(taken: inout Set<String>) -> JSON? {
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
            guard let base = [desc, rid].compactMap({ $0.map(FenceImport.slug) }).first(where: { !$0.isEmpty }) else {
                problem("has neither \"desc\" nor \"rid\" with a letter or digit, so it has no name to make its identifier from")
                return nil
            }
            var identifier = base
            var number = 1
            while taken.contains(identifier) {
                number += 1
                identifier = FenceImport.numbered(base, number)
            }
            if number > 1 {
                warnings.append(FenceProblem(
                    file: file, line: waypoint.line,
                    reason: "\(name): identifier \"\(identifier)\", since an earlier waypoint has \"\(base)\""))
            }
            taken.insert(identifier)
            var fence = JSONObject()
            fence["identifier"] = .string(identifier)
            if let desc, !desc.isEmpty { fence["name"] = .string(desc) }
            if let rid, !rid.isEmpty { fence["rid"] = .string(rid) }
            fence["latitude"] = .number(latitude)
            fence["longitude"] = .number(longitude)
            fence["radius"] = .number(radius)
            fence["note"] = .string(desc ?? "")
            fence["eventType"] = "onEntryAndExit"
            return .object(fence)
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

    /// A readable identifier made from `name`: lower case, accents dropped, letters and
    /// digits kept (of any script), every run of other characters one `-`, none at the
    /// ends, at most `Identifier.maximumLength` bytes. `Work / Office` is `work-office`,
    /// `Café Zürich` is `cafe-zurich`; empty when `name` has no letter or digit.
    static func slug(_ name: String) -> String {
        var slug = ""
        var separated = false
        for character in name.folding(options: .diacriticInsensitive, locale: nil).lowercased() {
            guard character.isLetter || character.isNumber else {
                separated = !slug.isEmpty
                continue
            }
            let piece = separated ? "-\(character)" : String(character)
            guard slug.utf8.count + piece.utf8.count <= Identifier.maximumLength else { break }
            slug += piece
            separated = false
        }
        return slug
    }

    /// `base` with `-number` at its end, cut so that it stays within
    /// `Identifier.maximumLength` bytes.
    static func numbered(_ base: String, _ number: Int) -> String {
        let suffix = "-\(number)"
        var cut = base
        while cut.utf8.count + suffix.utf8.count > Identifier.maximumLength { cut.removeLast() }
        return cut + suffix
    }
}
