import GeotifyCore
import GeotifyJSON

/// Turns a location message into a `Fix`, or says precisely why it cannot.
///
/// Two formats arrive:
/// - OwnTracks (`owntracks/<user>/<device>`): `{"_type":"location","lat":..,"lon":..,
///   "acc":..,"tst":..}`. Other `_type`s (lwt, transition, waypoint, card, ...) are not
///   positions and are ignored without being errors. OwnTracks leaves out fields whose
///   value is zero, so a missing `acc` is simply unknown.
/// - Plain JSON (`geotify/location/<device>`): `{"lat":..,"lon":..}` with optional
///   `acc` (metres) and `tst` (unix seconds); `latitude`/`longitude` are aliases, and
///   giving both spellings of one field is refused.
/// Unknown extra fields are ignored in both, but a message that names any field twice
/// is refused (`duplicate_field`), as the fence file is: other readers of the same
/// message might take the other value.
///
/// An OwnTracks app with payload encryption on wraps each message in
/// `{"_type":"encrypted","data":...}`: `decode` takes that layer off with the device's
/// key (`OwnTracksDecryption`) and reads the message inside like any other, as the
/// Recorder decrypts and then handles the cleartext. One layer is opened, as the apps
/// add one; an envelope that cannot be opened is refused, never ignored.
public struct LocationDecoder: Sendable {
    /// Which of the two message formats a subscription carries.
    public enum Format: String, Sendable {
        case ownTracks = "owntracks"
        case plain
    }

    /// Larger payloads are refused before parsing.
    public var maximumPayloadBytes: Int
    /// Opens OwnTracks encrypted payloads.
    package var decryption: OwnTracksDecryption
    /// Whether a payload is first read by `FlatObjectScan`, falling back to the parser
    /// for anything it does not take; off only to compare the two (the fuzz targets).
    public var scansFlatObjects = true

    /// A decoder that opens no encrypted payload (the fuzz targets use this one).
    public init(maximumPayloadBytes: Int = 65_536) {
        self.init(maximumPayloadBytes: maximumPayloadBytes, keys: OwnTracksKeys())
    }

    /// A decoder that opens encrypted payloads with `keys`.
    package init(maximumPayloadBytes: Int = 65_536, keys: OwnTracksKeys) {
        self.maximumPayloadBytes = maximumPayloadBytes
        decryption = OwnTracksDecryption(keys: keys)
    }

    /// The fix in `payload` from `device`, nil when the message is valid but not a
    /// position (an OwnTracks `_type` other than `location`). `arrival` (seconds since
    /// 1970), rounded down to a whole second, is the fix's time when the message carries none.
    public func decode(_ payload: [UInt8], device: String, format: Format, arrival: Double) throws(InputError) -> Fix? {
        try decode(payload, device: device, format: format, arrival: arrival, decrypted: false)
    }

    /// The refusal of a payload of `bytes`, more than `maximumPayloadBytes`; `unread`: its
    /// packet was larger than the bridge takes, so it was not read (`MQTTMessage.payloadLeftOut`).
    package func payloadTooLarge(_ bytes: Int, unread: Bool = false) -> InputError {
        let note = unread ? " (its packet is larger than the bridge takes, so it was not read)" : ""
        return InputError(.payloadTooLarge, "the payload is \(bytes) bytes; at most \(maximumPayloadBytes) are accepted\(note)")
    }

    /// `decode`, for `payload` as it came (`decrypted` false) or for the cleartext of an
    /// encrypted envelope (true), whose problems get the decryption's own codes.
    private func decode(_ payload: [UInt8], device: String, format: Format, arrival: Double, decrypted: Bool) throws(InputError) -> Fix? {
        if payload.isEmpty { throw InputError(decrypted ? .decryptedNotJSON : .emptyPayload, "the \(decrypted ? "decrypted " : "")payload is empty") }
        if payload.count > maximumPayloadBytes { throw payloadTooLarge(payload.count) }
        var fields = Fields()
        let notAnObject: JSON?
        if scansFlatObjects, let scanned = payload.withUnsafeBufferPointer({ FlatObjectScan.scan($0, keeping: Fields.names) }) {
            if let fix = Self.plainFix(scanned, payload, device: device, format: format, arrival: arrival) { return fix }
            fields = Fields(scanned, payload)
            notAnObject = nil
        } else {
            do {
                notAnObject = try LocationDecoder.parser.parse(payload, visitingMembers: Fields.names) { slot, value in
                    fields.values[slot] = value
                }
            } catch {
                if let name = error.duplicateMember {
                    throw InputError(.duplicateField, "the field \"\(name)\" is given more than once (line \(error.line), column \(error.column)); give each field once")
                }
                throw InputError(decrypted ? .decryptedNotJSON : .invalidJSON, "the \(decrypted ? "decrypted " : "")payload is not JSON: \(error)")
            }
        }
        if let notAnObject {
            throw InputError(
                decrypted ? .decryptedNotJSON : .notAnObject,
                "the \(decrypted ? "decrypted " : "")payload must be a JSON object, not \(notAnObject.kindDescription)")
        }

        let latitudeField: Field
        let longitudeField: Field
        switch format {
        case .ownTracks:
            switch fields[.type] {
            case .string("location")?: break
            case .string("encrypted")?:
                if decrypted { throw InputError(.invalidEnvelope, "the decrypted payload is itself encrypted; the apps encrypt once") }
                let cleartext = try decryption.cleartext(ofData: fields[.data], device: device)
                return try decode(cleartext, device: device, format: format, arrival: arrival, decrypted: true)
            case .string?: return nil
            case nil: throw InputError(.missingField, "an OwnTracks message needs \"_type\" (\"location\" for a position)")
            case let other?: throw InputError(.wrongType, "\"_type\" must be a string, not \(other.kindDescription)")
            }
            latitudeField = .lat
            longitudeField = .lon
        case .plain:
            latitudeField = try fields.spelling(.lat, .latitude)
            longitudeField = try fields.spelling(.lon, .longitude)
        }

        let latitude = try fields.requiredNumber(latitudeField)
        let longitude = try fields.requiredNumber(longitudeField)
        let accuracy = try fields.number(.acc)
        let timestamp = try fields.number(.tst)
        return Fix(
            device: device,
            coordinate: Coordinate(latitude: latitude, longitude: longitude),
            accuracy: accuracy,
            // Without its own time a fix is timed by its arrival, in whole seconds as
            // OwnTracks' `tst`, so the notification's `tst` and event id are whole too.
            timestamp: timestamp ?? arrival.rounded(.down))
    }

    private static let parser = JSONParser(maxDepth: 16, rejectingDuplicateMembers: true)

    /// The fix of a scanned payload that is a plain position: an OwnTracks `location`, or
    /// a plain message with one spelling of each coordinate, every field a number in its
    /// range. Nil for anything else, which `decode` then reads field by field, saying what
    /// is wrong: this is the same reading for the one case that comes by the hundred
    /// thousand, without a `JSON` value for each field.
    private static func plainFix(
        _ scanned: FlatObjectScan, _ payload: [UInt8], device: String, format: Format, arrival: Double
    ) -> Fix? {
        let latitude: FlatObjectScan.Value?
        let longitude: FlatObjectScan.Value?
        switch format {
        case .ownTracks:
            guard case .string(let type)? = scanned.values[Field.type.rawValue], Self.isLocationType(payload, type) else { return nil }
            latitude = scanned.values[Field.lat.rawValue]
            longitude = scanned.values[Field.lon.rawValue]
        case .plain:
            guard let short = scanned.values[Field.lat.rawValue] ?? scanned.values[Field.latitude.rawValue],
                  let long = scanned.values[Field.lon.rawValue] ?? scanned.values[Field.longitude.rawValue],
                  scanned.values[Field.lat.rawValue] == nil || scanned.values[Field.latitude.rawValue] == nil,
                  scanned.values[Field.lon.rawValue] == nil || scanned.values[Field.longitude.rawValue] == nil
            else { return nil }
            latitude = short
            longitude = long
        }
        guard case .number(let lat)? = latitude, Field.lat.range.contains(lat),
              case .number(let lon)? = longitude, Field.lon.range.contains(lon)
        else { return nil }
        var accuracy: Double?
        switch scanned.values[Field.acc.rawValue] {
        case nil: break
        case .number(let value)? where Field.acc.range.contains(value): accuracy = value
        default: return nil
        }
        var timestamp: Double?
        switch scanned.values[Field.tst.rawValue] {
        case nil: break
        case .number(let value)? where Field.tst.range.contains(value): timestamp = value
        default: return nil
        }
        return Fix(
            device: device, coordinate: Coordinate(latitude: lat, longitude: lon), accuracy: accuracy,
            timestamp: timestamp ?? arrival.rounded(.down))
    }

    /// Whether the bytes `span` of `payload` are `location`, the OwnTracks `_type` of a
    /// position: eight bytes, compared as one word (a comparison of slices element by
    /// element took 200 instructions a message).
    private static func isLocationType(_ payload: [UInt8], _ span: Range<Int>) -> Bool {
        guard span.count == 8 else { return false }
        return payload.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: span.lowerBound, as: UInt64.self) } == locationWord
    }

    /// `location` as `isLocationType` reads it.
    private static let locationWord = Array("location".utf8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }

    /// The members a location is read from; the parser skips every other one.
    private enum Field: Int, CaseIterable {
        case type, lat, lon, latitude, longitude, acc, tst, data

        /// The values the field may take when it is a number: one place for the decoder's
        /// field-by-field reading and for `plainFix`.
        var range: ClosedRange<Double> {
            switch self {
            case .lat, .latitude: -90...90
            case .lon, .longitude: -180...180
            case .acc, .tst, .type, .data: 0...Double.greatestFiniteMagnitude
            }
        }

        /// The member's name in the payload.
        var name: String {
            switch self {
            case .type: "_type"
            case .lat: "lat"
            case .lon: "lon"
            case .latitude: "latitude"
            case .longitude: "longitude"
            case .acc: "acc"
            case .tst: "tst"
            case .data: "data"
            }
        }
    }

    /// The values of one payload's `Field`s, as the parser hands them over: no object is
    /// built for a location, nor a string for each of its member names.
    private struct Fields {
        static let names = JSONParser.MemberNames(Field.allCases.map(\.name))

        /// One value per `Field`, by its raw value; on the stack, as a location is read
        /// for every message.
        var values = InlineArray<8, JSON?>(repeating: nil)

        init() {
            assert(values.count == Field.allCases.count, "one value for each field")
        }

        /// The fields `scanned` out of `payload`, as the parser would have handed them over.
        init(_ scanned: FlatObjectScan, _ payload: [UInt8]) {
            for slot in values.indices {
                values[slot] = scanned.values[slot]?.json(in: payload)
            }
        }

        subscript(field: Field) -> JSON? { values[field.rawValue] }

        /// Which of a field's two spellings the payload uses (`short` when neither); refuses both.
        func spelling(_ short: Field, _ long: Field) throws(InputError) -> Field {
            guard self[long] != nil else { return short }
            guard self[short] == nil else {
                throw InputError(.duplicateField, "both \"\(short.name)\" and \"\(long.name)\" are given; they are one field: give one of them")
            }
            return long
        }

        /// The number `field`, which must be there.
        func requiredNumber(_ field: Field) throws(InputError) -> Double {
            guard let value = try number(field) else { throw InputError(.missingField, "missing \"\(field.name)\"") }
            return value
        }

        /// The number `field` within its `range`, nil when the payload has no `field`.
        func number(_ field: Field) throws(InputError) -> Double? {
            let range = field.range
            switch self[field] {
            case nil:
                return nil
            case .number(let value)?:
                guard range.contains(value) else {
                    let allowed = range.upperBound == .greatestFiniteMagnitude ? "must not be negative" : "is outside \(JSONWriter.text(of: range.lowerBound))...\(JSONWriter.text(of: range.upperBound))"
                    throw InputError(.outOfRange, "\(field.name) \(JSONWriter.text(of: value)) \(allowed)")
                }
                return value
            case let other?:
                throw InputError(.wrongType, "\"\(field.name)\" must be a number, not \(other.kindDescription)")
            }
        }
    }
}
