@testable import GeotifyBridge
import GeotifyJSON
import GeotifyMQTT
import GeotifyTestSupport

/// What a hostile tracker sends, reproducibly from a seed: valid positions of the devices
/// the fence file names (the signal) mixed with everything else a client can put on a
/// topic it may write: valid payloads changed at random or on purpose (bytes flipped,
/// inserted, deleted, cut short, duplicated; keys given twice, numbers too large or not
/// numbers at all, nesting too deep, strings too long, invalid UTF-8, NUL bytes), random
/// bytes, encrypted OwnTracks envelopes that cannot be opened or hold garbage, commands
/// likewise, and odd devices and topics (empty levels, wildcards, overlong, non-ASCII,
/// wildcards and slashes hidden under combining marks, control characters).
///
/// Deterministic: SplitMix64 draws everything, and the one envelope that is changed at
/// random is a pinned ciphertext, so a failure's seed reproduces it.
struct HostileTraffic {
    var random: SplitMix64
    /// When the messages are made: the fix time of the valid positions.
    var now: Double

    init(seed: UInt64, now: Double) {
        random = SplitMix64(seed: seed)
        self.now = now
    }

    // MARK: Drawing

    mutating func below(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
    mutating func pick<Element>(_ items: [Element]) -> Element { items[below(items.count)] }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    // MARK: The mix

    /// The devices the fence file names, whose positions are the signal.
    static let tracked = ["alice/phone", "bob/phone", "zoë/watch"]
    /// The only device with an OwnTracks secret.
    static let keyed = "alice/phone"
    static let secret = "s3cr1t"
    /// Where the tracked devices go: in and out of every fence, and far away.
    static let places: [(Double, Double)] = [
        (52.52, 13.405), (52.50, 13.30), (52.53, 13.38), (52.51, 13.39), (52.45, 13.50), (48.137, 11.575),
    ]

    /// One message of the mix.
    mutating func next() -> MQTTMessage {
        switch below(100) {
        case 0..<24: validPosition(of: pick(Self.tracked))
        case 24..<30: validPosition(of: stranger())
        case 30..<50: mutatedPosition()
        case 50..<54: MQTTMessage(topic: positionTopic(of: pick(Self.tracked), ownTracks: chance(50)), payload: randomBytes())
        case 54..<58: notAPosition()
        case 58..<65: hostileEnvelope()
        case 65..<82: command()
        case 82..<94: oddDevice()
        default: oddTopic()
        }
    }

    /// A device the fence file does not name: few owners with few devices each, so the
    /// admission limits (per owner and in all) are reached.
    mutating func stranger() -> String { "u\(below(9))/d\(below(9))" }

    func positionTopic(of device: String, ownTracks: Bool) -> String {
        ownTracks ? "owntracks/\(device)" : "geotify/location/\(device)"
    }

    // MARK: Positions

    /// The members of a valid position at one of `places`, as JSON texts.
    mutating func positionFields(ownTracks: Bool) -> [(String, String)] {
        let place = pick(Self.places)
        let latitude = place.0 + Double(below(601) - 300) / 1_000_000
        let longitude = place.1 + Double(below(601) - 300) / 1_000_000
        var fields: [(String, String)] = []
        if ownTracks { fields.append(("_type", #""location""#)) }
        let spelledOut = !ownTracks && chance(20)
        fields.append((spelledOut ? "latitude" : "lat", JSONWriter.text(of: latitude)))
        fields.append((spelledOut ? "longitude" : "lon", JSONWriter.text(of: longitude)))
        if let accuracy = pick([nil, 5, 12, 40, 150, 3_000] as [Double?]) { fields.append(("acc", JSONWriter.text(of: accuracy))) }
        switch below(10) {
        case 0: break
        case 1: fields.append(("tst", JSONWriter.text(of: now - Double(below(120)))))
        default: fields.append(("tst", JSONWriter.text(of: now)))
        }
        if ownTracks { fields += [("tid", #""ph""#), ("batt", "81"), ("conn", #""w""#)] }
        return fields
    }

    static func object(_ fields: [(String, String)]) -> [UInt8] {
        Array(("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
    }

    /// A valid position of `device`: OwnTracks, plain, or (for the keyed device) encrypted.
    mutating func validPosition(of device: String) -> MQTTMessage {
        let ownTracks = chance(55)
        let payload = Self.object(positionFields(ownTracks: ownTracks))
        if ownTracks && device == Self.keyed && chance(30) {
            return MQTTMessage(topic: positionTopic(of: device, ownTracks: true), payload: Self.envelope(sealing: payload))
        }
        return MQTTMessage(topic: positionTopic(of: device, ownTracks: ownTracks), payload: payload)
    }

    /// A valid position changed at random or on purpose.
    mutating func mutatedPosition() -> MQTTMessage {
        let device = chance(80) ? pick(Self.tracked) : stranger()
        let ownTracks = chance(50)
        let fields = positionFields(ownTracks: ownTracks)
        return MQTTMessage(topic: positionTopic(of: device, ownTracks: ownTracks), payload: mutated(fields))
    }

    /// Bytes JSON is made of, and some it must never hold.
    static let alphabet = Array(#"{}[]",:0123456789.eE+-truefalsn\ _"#.utf8) + [0x00, 0x0A, 0x09, 0xFF, 0xC3, 0xA4, 0x80]
    /// Numbers a parser may choke on, and some just out of range.
    static let hostileNumbers = [
        "1e400", "-1e400", "1e-400", "NaN", "-NaN", "Infinity", "-Infinity", "inf", "-0", "0", "1.7976931348623157e308",
        "-1.7976931348623157e308", "4.9e-324", String(repeating: "9", count: 400), "0." + String(repeating: "0", count: 400) + "1",
        "0x10", "1_000", "+1", ".5", "5.", "01", "1e", "--1", "1e+", "90.0000000000001", "-90", "180", "180.000001",
        "-180.0000001", "1e308", "-1",
    ]
    static let wrongTypes = [#""52.5""#, "[52.5]", #"{"v":52.5}"#, "null", "true", "false", #""""#, "[]", "{}"]
    static let invalidUTF8: [[UInt8]] = [
        [0xFF], [0xFE], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],
    ]

    /// The object of `fields`, changed by one of the mutations.
    mutating func mutated(_ fields: [(String, String)]) -> [UInt8] {
        var text = Self.object(fields)
        let field = below(fields.count)
        func replacing(_ value: String) -> [UInt8] {
            var changed = fields
            changed[field].1 = value
            return Self.object(changed)
        }
        switch below(17) {
        case 0:
            return RandomEdits.edited(text, alphabet: Self.alphabet, maximum: 4, &random)
        case 1:
            let position = below(text.count)
            text[position] ^= UInt8(1) << UInt8(below(8))
        case 2:
            let position = below(text.count + 1)
            text.insert(contentsOf: (0..<(1 + below(8))).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: position)
        case 3:
            let start = below(text.count)
            text.removeSubrange(start..<min(text.count, start + 1 + below(12)))
        case 4:
            text = Array(text.prefix(below(text.count)))
        case 5:
            let start = below(text.count)
            let slice = text[start..<min(text.count, start + 1 + below(16))]
            text.insert(contentsOf: slice, at: below(text.count + 1))
        case 6:
            // A key given twice, or under both spellings.
            let (key, value) = pick(fields + [("latitude", "52.5"), ("longitude", "13.4"), ("lat", "52.5")])
            text.insert(contentsOf: Array(",\"\(key)\":\(value)".utf8), at: text.count - 1)
        case 7:
            return replacing(pick(Self.hostileNumbers))
        case 8:
            return replacing(pick(Self.wrongTypes))
        case 9:
            let depth = pick([17, 64, 1_000, 4_000])
            switch below(3) {
            case 0: return Array(String(repeating: "[", count: depth).utf8) + Array(String(repeating: "]", count: depth).utf8)
            case 1: return Array((String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)).utf8)
            default: return replacing(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
            }
        case 10:
            let length = pick([200, 4_000, 8_190])
            var changed = fields
            if chance(50) {
                changed.append(("note", "\"" + String(repeating: "a", count: length) + "\""))
            } else {
                changed.append((String(repeating: "k", count: length), "1"))
            }
            return Self.object(changed)
        case 11:
            text.insert(contentsOf: pick(Self.invalidUTF8), at: below(text.count + 1))
        case 12:
            switch below(3) {
            case 0: text.insert(0, at: below(text.count + 1))
            case 1: return replacing(#""loc\u0000ation""#)
            default: text.insert(contentsOf: Array(#","la\u0000t":1"#.utf8), at: text.count - 1)
            }
        case 13:
            // Escapes: some spell a valid position, some are invalid.
            let escaped = pick([
                #""loc\u0061tion""#, #""\ud800""#, #""\uDFFF\uD800""#, #""\uZZZZ""#, #""location\""#, #""loc\/ation""#,
                #""location\u0000""#, #""\u006cocation""#,
            ])
            if fields.first?.0 == "_type" {
                var changed = fields
                changed[0].1 = escaped
                return Self.object(changed)
            }
            text.insert(contentsOf: Array(#","\u006cat":52.5"#.utf8), at: text.count - 1)
        case 14:
            switch below(5) {
            case 0: text += Array(" x".utf8)
            case 1: text += text
            case 2: text = [0xEF, 0xBB, 0xBF] + text
            case 3: text = Array("  \n\t".utf8) + text + Array("\n".utf8)
            default: text.append(0)
            }
        case 15:
            // Larger than `maximumPayloadBytes`, or just within it.
            let size = HostileRun.maximumPayloadBytes + pick([-1, 0, 1, 40])
            let padding = max(0, size - text.count)
            text.insert(contentsOf: [UInt8](repeating: 0x20, count: padding), at: text.count - 1)
        default:
            // Members dropped: a position without its coordinates.
            var changed = fields
            changed.remove(at: field)
            if chance(30) { changed = [] }
            return Self.object(changed)
        }
        return text
    }

    mutating func randomBytes() -> [UInt8] {
        let count = chance(5) ? below(HostileRun.maximumPayloadBytes + 64) : below(80)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    /// Valid OwnTracks messages that are not positions (ignored), and a few that claim to
    /// be one but are not.
    mutating func notAPosition() -> MQTTMessage {
        let type = pick(["lwt", "transition", "waypoint", "waypoints", "card", "cmd", "status", "beacon", "steps", "request", "location", "", "Location"])
        var fields = [("_type", "\"\(type)\"")]
        if chance(50) { fields.append(("tst", JSONWriter.text(of: now))) }
        if type == "transition" { fields += [("event", #""enter""#), ("desc", #""home""#), ("lat", "52.52"), ("lon", "13.405")] }
        return MQTTMessage(topic: positionTopic(of: pick(Self.tracked), ownTracks: true), payload: Self.object(fields))
    }

    // MARK: Encrypted envelopes

    static let box = SecretBox(key: OwnTracksKeys.key(secret: secret))

    static func envelope(data: String) -> [UInt8] {
        Array(#"{"_type":"encrypted","data":"\#(data)"}"#.utf8)
    }

    /// `cleartext` sealed with the keyed device's secret, as the app sends it. The nonce
    /// is random, but what the bridge makes of the envelope is not.
    static func envelope(sealing cleartext: [UInt8]) -> [UInt8] {
        envelope(data: SecretBox.base64(box?.seal(cleartext) ?? []))
    }

    /// An encrypted envelope that must be refused: changed, of a device without a key,
    /// without `data`, not base64, too short, altered, or sealing garbage.
    mutating func hostileEnvelope() -> MQTTMessage {
        let pinned = OwnTracksDecryptionTests.pinned
        var device = Self.keyed
        let payload: [UInt8]
        switch below(8) {
        case 0:
            let base64 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".utf8)
            payload = RandomEdits.edited(Self.envelope(data: pinned), alphabet: base64 + Self.alphabet, maximum: 3, &random)
        case 1:
            device = chance(50) ? stranger() : pick(Self.tracked.filter { $0 != Self.keyed })
            payload = Self.envelope(data: pinned)
        case 2:
            payload = Array(pick([#"{"_type":"encrypted"}"#, #"{"_type":"encrypted","data":5}"#, #"{"_type":"encrypted","data":null}"#,
                                  #"{"_type":"encrypted","data":["AAAA"]}"#, #"{"_type":"encrypted","data":"AAAA","data":"AAAA"}"#]).utf8)
        case 3:
            payload = Self.envelope(data: pick(["!!!!", "abc", "abcd=", "AAAA\\nAAAA", "====", "", "A===", String(repeating: "A", count: 4_001)]))
        case 4:
            payload = Self.envelope(data: pick(["AAAA", String(repeating: "A", count: 52)]))
        case 5:
            var sealed = SecretBox.bytes(base64: pinned) ?? []
            sealed[below(sealed.count)] ^= UInt8(1) << UInt8(below(8))
            payload = Self.envelope(data: SecretBox.base64(sealed))
        case 6:
            let garbage: [UInt8] = switch below(5) {
            case 0: randomBytes()
            case 1: Array("[1]".utf8)
            case 2: []
            case 3: Self.envelope(data: pinned)
            default: mutated(positionFields(ownTracks: true))
            }
            payload = Self.envelope(sealing: garbage)
        default:
            payload = Self.envelope(sealing: Self.object(positionFields(ownTracks: true)))
            return MQTTMessage(topic: positionTopic(of: device, ownTracks: false), payload: payload)
        }
        return MQTTMessage(topic: positionTopic(of: device, ownTracks: true), payload: payload)
    }

    // MARK: Commands

    /// Fence identifiers a command may try: the file's, new ones, and ones that must be
    /// refused (wildcards or a slash, also hidden under a combining mark; NUL; empty; long).
    static let fenceNames = [
        "home", "office", "gym", "school", "pool", "nope", "gym+\\u0301", "a/\\u0301b", "x#\\u0308", "+", "a/b", "\\u0000", "",
        String(repeating: "f", count: 201), "caf\\u00e9", "\\ud83d\\ude00",
    ]

    mutating func commandText() -> String {
        let fence = pick(Self.fenceNames)
        let token = "t\(1 + below(14))"
        let added = #"{"identifier":"\#(pick(Self.fenceNames))","latitude":52.515,"longitude":13.41,"radius":\#(pick(["60", "1e400", "-5", "0"])),"note":"Pool","eventType":"onEntryAndExit"}"#
        return pick([
            #"{"action":"list","id":"q1"}"#,
            #"{"action":"get","fence":"\#(fence)"}"#,
            #"{"action":"add","fence":\#(added)}"#,
            #"{"action":"edit","fence":"\#(fence)","changes":{"radius":\#(pick(["150", "30", "NaN", "\"x\""]))}}"#,
            #"{"action":"edit","fence":"\#(fence)","changes":{"identifier":"\#(pick(Self.fenceNames))"}}"#,
            #"{"action":"delete","fence":"\#(fence)"}"#,
            #"{"action":"delete","fence":"\#(fence)","confirm":true}"#,
            #"{"action":"preview","change":{"action":"edit","fence":"\#(fence)","changes":{"radius":30}}}"#,
            #"{"action":"preview","change":{"action":"add","fence":\#(added)}}"#,
            #"{"action":"preview","change":{"action":"delete","fence":"\#(fence)"}}"#,
            #"{"action":"commit","token":"\#(token)"}"#,
            #"{"action":"cancel","token":"\#(token)"}"#,
            #"{"action":"resetBadge"}"#,
            #"{"action":"resetBadge","id":7}"#,
            #"{"action":"fnord"}"#,
        ])
    }

    /// A command, valid, changed, or random bytes, with an MQTT 5 response topic now and
    /// then (inside the device's reply space or not, or with a wildcard or control
    /// character in it).
    mutating func command() -> MQTTMessage {
        let device = chance(75) ? pick(Self.tracked) : chance(50) ? stranger() : pick(Self.oddDevices)
        let text = commandText()
        let payload: [UInt8]
        switch below(10) {
        case 0..<5: payload = Array(text.utf8)
        case 5..<9:
            // Mutate a command's bytes as a position's.
            payload = switch below(3) {
            case 0: RandomEdits.edited(Array(text.utf8), alphabet: Self.alphabet, maximum: 3, &random)
            case 1: Array(text.utf8) + pick(Self.invalidUTF8)
            default: Array(text.dropLast().utf8) + Array(#","action":"list"}"#.utf8)
            }
        default: payload = randomBytes()
        }
        var message = MQTTMessage(topic: "geotify/cmd/\(device)", payload: payload)
        if chance(25) {
            let reply = "geotify/reply/\(device)"
            message.responseTopic = pick([
                reply, reply + "/app-1", "geotify/reply/bob/phone", reply + "/+", reply + "/+\u{301}", reply + "/#\u{308}",
                reply + "/\u{0}x", reply + "/\u{1}", reply + "/\u{9B}", "geotify/event/\(device)", "", reply + "x", reply + "/",
                reply + "/" + String(repeating: "r", count: 300),
            ])
        }
        if chance(10) { message.correlationData = (0..<below(40)).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        return message
    }

    // MARK: Odd devices and topics

    /// One scalar a string literal may not spell (a non-character).
    static func scalar(_ value: UInt32) -> String { Unicode.Scalar(value).map { String(Character($0)) } ?? "?" }

    static let oddDevices: [String] = [
        "", "/", "a//b", "a/", "/a", "+", "#", "a/+", "a/#", "+/+", "a/+\u{301}", "a/#\u{308}", "x+\u{301}/y", "a//\u{301}b",
        "a/\u{301}b", "\u{301}/x", "älice/📱", "zoe\u{308}/watch", "Alice/phone", "ALICE/PHONE", "a\u{0}b/c", "a\u{1}b/c",
        "a/\u{7F}", "a/\u{9B}", "x/" + scalar(0xFFFE), "x/\u{FFFD}", "x/" + scalar(0xFDD0), "x/\u{202E}evil", "x/\u{200D}",
        "x/" + String(repeating: "x", count: 199), "x/" + String(repeating: "x", count: 198), String(repeating: "é", count: 100),
        Array(repeating: "a", count: 20).joined(separator: "/"), "shared/x", "shared", "family/x", " /x", "a b/c d",
        "x/\u{E000}", scalar(0x10FFFF) + "/x", "x/\u{D7FF}",
    ] + (0..<12).map { "mallory/\u{301}\($0)" }

    /// A valid position or command of an odd device.
    mutating func oddDevice() -> MQTTMessage {
        let device = chance(40) ? "mallory/\u{301}\(below(12))" : pick(Self.oddDevices)
        switch below(3) {
        case 0: return MQTTMessage(topic: "owntracks/\(device)", payload: Self.object(positionFields(ownTracks: true)))
        case 1: return MQTTMessage(topic: "geotify/location/\(device)", payload: Self.object(positionFields(ownTracks: false)))
        default: return MQTTMessage(topic: "geotify/cmd/\(device)", payload: Array(#"{"action":"resetBadge"}"#.utf8))
        }
    }

    /// Topics no filter routes, or only just; occupancy parts; deep and long ones.
    mutating func oddTopic() -> MQTTMessage {
        let topic = pick([
            "", "/", "#", "+", "owntracks", "owntracks/alice", "owntracks/alice/phone/event", "owntracks/alice/phone/cmd",
            "owntracks//phone", "owntracks/alice/", "geotify/location", "geotify/location/", "geotify/cmd/", "geotify/cmd",
            "geotify/error", "geotify/reply/alice/phone", "geotify/shard/0/occupancy/shared/school",
            "geotify/shard/x/occupancy/a/b", "geotify/shard/99999/occupancy/a/b", "geotify/shard/-1/occupancy/a/b",
            "$SYS/broker/uptime", "geotify/location/" + Array(repeating: "l", count: 17).joined(separator: "/"),
            "geotify/location/" + String(repeating: "x", count: 20_000), "owntracks/\u{0}/\u{0}",
        ])
        let payload: [UInt8] = switch below(3) {
        case 0: Self.object(positionFields(ownTracks: true))
        case 1: Array(pick(["3", "", "007", "1234567890", "-1", "x"]).utf8)
        default: randomBytes()
        }
        return MQTTMessage(topic: topic, payload: payload, retain: chance(50))
    }
}
