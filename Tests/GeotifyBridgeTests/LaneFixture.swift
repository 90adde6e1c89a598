import Foundation
@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore
import Synchronization

/// A lane core with a fence book and a clock of its own, driven message by message: the
/// lane's behaviour in microseconds, without a broker, a database or a thread.
struct LaneFixture {
    var core: LaneCore
    var book: FenceBook
    let settings: Settings
    /// The clock: each message arrives at `now`; `advance` moves it and ticks the core.
    var now: Double = 1_700_000_000

    /// A fixture for the fence file `fences` (JSON) and `settings`, with the devices of
    /// `states` loaded as at a start (those of `named` saved while the file named them),
    /// and those of `admittedElsewhere` holding admission places in other lanes.
    init(
        fences: String, settings configure: (inout Settings) -> Void = { _ in }, states: [String: DeviceState] = [:],
        named: Set<String> = [], admittedElsewhere: [String] = []
    ) throws {
        var settings = Settings()
        settings.lanes = 1
        settings.homeAssistantEnabled = false
        configure(&settings)
        self.settings = settings
        let book = try LaneFixture.parse(fences, settings: settings).revised(knownRevisions: [:], currentRevision: 0)
        self.book = book
        var configuration = LaneConfiguration(settings: settings)
        let tokens = Counter()
        configuration.makeToken = { tokens.next() }
        core = LaneCore(
            configuration: configuration,
            admission: DeviceAdmission(
                maximum: settings.maximumDevices, perOwner: settings.maximumDevicesPerOwner, devices: states.keys.filter { !book.knows($0) } + admittedElsewhere),
            states: states, named: named, book: book, now: now)
    }

    /// Hands the core one OwnTracks position of `device` and returns what followed.
    mutating func ownTracks(_ device: String, _ latitude: Double, _ longitude: Double, acc: Double? = 5, tst: Double? = nil) -> LaneEffects {
        handle([ownTracksPosition(device, latitude, longitude, acc: acc, tst: tst)])
    }

    /// An OwnTracks position of `device` as the router hands it to a lane (at `tst`, by
    /// default now), for a batch of several.
    func ownTracksPosition(_ device: String, _ latitude: Double, _ longitude: Double, acc: Double? = 5, tst: Double? = nil) -> Inbound {
        var object = JSONObject()
        object["_type"] = "location"
        object["lat"] = .number(latitude)
        object["lon"] = .number(longitude)
        object["tst"] = .number(tst ?? now)
        if let acc { object["acc"] = .number(acc) }
        return inbound(device, topic: "owntracks/\(device)", payload: JSONWriter().bytes(.object(object)), route: .location(.ownTracks))
    }

    /// Hands the core one plain position of `device`.
    mutating func plain(_ device: String, _ latitude: Double, _ longitude: Double, tst: Double? = nil) -> LaneEffects {
        let object: JSON = ["lat": .number(latitude), "lon": .number(longitude), "tst": .number(tst ?? now), "acc": 5]
        return handle([inbound(device, topic: "geotify/location/\(device)", payload: JSONWriter().bytes(object), route: .location(.plain))])
    }

    /// Hands the core one command (JSON text) for `device`; `retain` as the broker
    /// delivers one it had stored.
    mutating func command(
        _ device: String, _ json: String, responseTopic: String? = nil, correlationData: [UInt8]? = nil, retain: Bool = false
    ) -> LaneEffects {
        var message = MQTTMessage(topic: "geotify/cmd/\(device)", payload: Array(json.utf8), retain: retain)
        message.responseTopic = responseTopic
        message.correlationData = correlationData
        return handle([Inbound(route: .command, device: device, message: message, arrival: now)])
    }

    /// Hands the core a batch.
    mutating func handle(_ batch: [Inbound]) -> LaneEffects {
        var effects = LaneEffects()
        core.handle(batch, book: book, into: &effects)
        return effects
    }

    /// Carries out the fence writes in `effects` on the fixture's book (as the shell would
    /// on the file, every write succeeding unless refused by validation, the write taking
    /// `took` seconds) and returns what the core answered.
    mutating func write(_ effects: LaneEffects, took: Double = 0) -> LaneEffects {
        let (results, changed) = LiveFenceBook.apply(effects.fenceWrites, to: book, limits: settings.limits)
        book = book.replacing(devices: changed)
        var answered = LaneEffects()
        core.finish(effects.fenceWrites, results: results, book: book, took: took, at: now, into: &answered)
        return answered
    }

    /// The fence file `fences` (JSON) as a book, before revisions.
    static func parse(_ fences: String, settings: Settings) throws -> FenceBook {
        let loaded = FenceFile(path: "fences.json", limits: settings.limits).parse(Array(fences.utf8))
        guard let parsed = loaded.book else { throw FixtureError(loaded.errors.map(\.description).joined(separator: "; ")) }
        return parsed
    }

    /// Replaces the fences with those of `fences` (JSON), as an edit of the file does:
    /// fences the book had keep their revisions.
    mutating func edit(_ fences: String) throws {
        book = try LaneFixture.parse(fences, settings: settings).revised(from: book)
    }

    /// Moves the clock by `seconds` and ticks the core.
    mutating func advance(_ seconds: Double) -> LaneEffects {
        now += seconds
        var effects = LaneEffects()
        core.tick(now: now, book: book, into: &effects)
        return effects
    }

    func inbound(_ device: String, topic: String, payload: [UInt8], route: Inbound.Route) -> Inbound {
        Inbound(route: route, device: device, message: MQTTMessage(topic: topic, payload: payload), arrival: now)
    }

    /// Tokens `t1`, `t2`, ... in order, so tests can name them.
    final class Counter: Sendable {
        private let value = Mutex(0)
        func next() -> String { value.withLock { $0 += 1; return "t\($0)" } }
    }

    struct FixtureError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

extension LaneEffects {
    /// The topics of the outbox, in order.
    var outboxTopics: [String] { outbox.map(\.topic) }

    /// The text of the outbox message on `topic` (the last one), if any.
    func outboxText(_ topic: String) -> String? {
        outbox.last { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    /// The reply on `geotify/reply/<device>` as an object.
    func reply(_ device: String) -> [String: Any]? {
        direct.last { $0.topic == "geotify/reply/\(device)" }
            .flatMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
    }

    /// The event notifications in the outbox, as objects.
    var events: [[String: Any]] {
        outbox.filter { $0.topic.hasPrefix("geotify/event/") }
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
    }
}
