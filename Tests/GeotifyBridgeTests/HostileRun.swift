import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport

/// Two lanes fed the same traffic: `hostile` every message, `clean` only those the
/// decoders take (positions, and commands that decode). What each message does in
/// `hostile` is checked against what the code promises for it, and the two lanes must
/// decide the same for every valid message and tick, and end in the same state.
struct HostileRun {
    static let maximumPayloadBytes = 8_192
    static let fences = """
        { "devices": {
            "alice/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                "note": "Welcome home", "eventType": "onEntryAndExit" },
              { "identifier": "office", "latitude": 52.50, "longitude": 13.30, "radius": 150,
                "note": "", "eventType": "onEntry" } ],
            "bob/phone": [
              { "identifier": "gym", "latitude": 52.51, "longitude": 13.39, "radius": 80,
                "note": "Gym", "eventType": ["onEntry", "onDwell"], "dwell": 120 } ],
            "zoë/watch": [] },
          "groups": { "family": ["alice/phone", "bob/phone", "zoë/watch"] },
          "shared": [
            { "identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150,
              "note": "At school", "eventType": "onEntryAndExit", "group": "family" } ] }
        """

    static func configure(_ settings: inout Settings) {
        settings.homeAssistantEnabled = true
        settings.maximumDevices = 24
        settings.maximumDevicesPerOwner = 4
        settings.deviceEvictionAge = 900
        settings.maximumPayloadBytes = maximumPayloadBytes
        settings.maximumPreviews = 12
        settings.maximumPreviewsPerDevice = 4
    }

    /// A lane of the fixture's, with the keyed device's OwnTracks secret.
    static func lane() throws -> LaneFixture {
        var lane = try LaneFixture(fences: fences, settings: configure)
        var configuration = lane.core.configuration
        let keys = try OwnTracksKeys(parsing: Array("\(HostileTraffic.keyed) \(HostileTraffic.secret)\n".utf8), file: "keys")
        configuration.decoder = LocationDecoder(maximumPayloadBytes: maximumPayloadBytes, keys: keys)
        lane.core = LaneCore(
            configuration: configuration,
            admission: DeviceAdmission(maximum: lane.settings.maximumDevices, perOwner: lane.settings.maximumDevicesPerOwner),
            states: [:], book: lane.book, now: lane.now)
        return lane
    }

    var hostile: LaneFixture
    var clean: LaneFixture
    let router: MessageRouter
    let seed: UInt64
    /// What the hostile lane should have reported once (`LaneCore.reportedOnce`), when
    /// messages go one by one.
    var reported: Set<String> = []
    /// Whether `reported` is kept: not in bursts, whose reports are not checked one by one.
    var modelsReports = true
    /// How many messages had each outcome: the mix must reach every kind.
    var outcomes: [String: Int] = [:]
    var failures = 0
    private var number = 0
    private var current = ""

    init(seed: UInt64) throws {
        self.seed = seed
        hostile = try Self.lane()
        clean = try Self.lane()
        router = try MessageRouter(settings: hostile.settings, topics: Topics(prefix: "geotify"))
    }

    // MARK: Driving

    /// Moves both lanes' clocks by `seconds`, and ticks them when `tick`.
    mutating func pass(seconds: Double, tick: Bool) {
        guard tick else {
            hostile.now += seconds
            clean.now += seconds
            return
        }
        current = "a tick"
        let ticked = hostile.advance(seconds)
        compare(ticked, clean.advance(seconds), direct: true)
        checkPublishable(ticked)
    }

    /// Sends one message as the bridge would: routed, then handed to the lane alone.
    /// Returns what the hostile lane decided.
    @discardableResult
    mutating func send(_ message: MQTTMessage) -> LaneEffects {
        number += 1
        current = Self.describe(message)
        guard let inbound = route(message) else { return LaneEffects() }
        let verdict = verdict(of: inbound)
        let device = inbound.device
        let before = Snapshot(hostile, device)
        let effects = Self.run(&hostile, [inbound])
        checkPublishable(effects)
        switch verdict {
        case .refused(let error):
            tally("position refused: \(error.code.rawValue)")
            expectUntouched(effects, before: before, device: device)
            check(effects.counters.amounts == [.errors(error.code): 1],
                  "a refused position counts errors.\(error.code.rawValue) once and nothing else, not \(effects.counters.amounts)")
            let reports = error.code != .noDecryptionKey || reportsOnce("key \(device)")
            checkReports(effects.direct, reports ? [(error.code, error.message)] : [], inbound)
        case .ignored:
            tally("ignored")
            expectUntouched(effects, before: before, device: device)
            check(effects.counters.amounts == [.messagesIgnored: 1], "an ignored message counts messages_ignored, not \(effects.counters.amounts)")
            check(effects.direct.isEmpty, "an ignored message reports nothing")
        case .position:
            let limit = admissionLimit(of: device)
            compare(effects, Self.run(&clean, [inbound]), direct: false)
            if effects.counters[.errors(.tooManyDevices)] > 0 {
                tally("position refused: too_many_devices")
                expectUntouched(effects, before: before, device: device)
                check(effects.counters.amounts == [.errors(.tooManyDevices): 1],
                      "a refused device counts errors.too_many_devices once and nothing else, not \(effects.counters.amounts)")
                checkReports(effects.direct, reportsOnce(limit) ? [(.tooManyDevices, nil)] : [], inbound)
            } else {
                tally("position taken")
                checkTaken(effects, inbound)
            }
            compareRecords(of: device)
        case .command:
            tally("command")
            let reference = Self.run(&clean, [inbound])
            compare(effects, reference, direct: true)
            checkReply(effects, inbound, before: before, undecodable: nil)
            compareRecords(of: device)
        case .undecodableCommand(let error):
            tally("command refused: \(error.code.rawValue)")
            checkReply(effects, inbound, before: before, undecodable: error)
        }
        checkBounds()
        return effects
    }

    /// Sends `messages` as one burst, as the bridge hands a lane what arrived together:
    /// routed, cut into parts where a device has a second command (`LaneCore.parts`),
    /// each part handled and its fence writes made before the next. The clean lane gets
    /// the valid messages of each part.
    mutating func send(burst messages: [MQTTMessage]) {
        modelsReports = false
        number += 1
        current = "a burst of \(messages.count): " + messages.map(Self.describe).joined(separator: "; ")
        let routed = messages.compactMap { route($0) }
        for part in LaneCore.parts(of: routed) {
            let batch = Array(routed[part])
            let verdicts = batch.map { verdict(of: $0) }
            let valid = zip(batch, verdicts).filter(\.1.isValid).map(\.0)
            let effects = Self.run(&hostile, batch)
            var expected = valid.isEmpty ? LaneEffects() : Self.run(&clean, valid)
            for (inbound, verdict) in zip(batch, verdicts) {
                switch verdict {
                case .refused(let error):
                    tally("position refused: \(error.code.rawValue)")
                    expected.counters.add(.errors(error.code))
                case .ignored:
                    tally("ignored")
                    expected.counters.add(.messagesIgnored)
                case .undecodableCommand(let error):
                    tally("command refused: \(error.code.rawValue)")
                    let refused = Self.refuses(responseTopic: inbound.message.responseTopic, of: inbound.device)
                    expected.counters.add(.commandsRefused(refused ? .notAllowed : error.code))
                case .position: tally("position")
                case .command: tally("command")
                }
            }
            if effects.counters[.errors(.tooManyDevices)] > 0 { tally("position refused: too_many_devices") }
            checkPublishable(effects)
            compare(effects, expected, direct: false)
        }
        checkBounds()
    }

    /// The message routed, or nil when the router keeps it from the lanes (checked here).
    private mutating func route(_ message: MQTTMessage) -> Inbound? {
        switch router.route(message, arrival: hostile.now) {
        case .lane(_, let inbound):
            let problem = Self.problem(device: inbound.device)
            check(problem == nil, "the router hands a lane only devices whose bytes make a usable identifier: \(problem ?? "")")
            return inbound
        case .refused(let error, let topic):
            tally("refused by the router")
            check(error.code == .invalidTopic, "the router refuses by the topic alone, as invalid_topic, not \(error.code)")
            // As `Bridge.refuse` reports it.
            let shown = String(topic.prefix(200))
            checkReports([hostile.core.configuration.messages.error(error, topic: shown, device: nil)], [(error.code, error.message)], nil, topic: shown)
        case .occupancy(let part):
            tally("occupancy part")
            check(part.shard >= 0 && (part.count ?? 0) >= 0, "an occupancy part has an instance and a count: \(part)")
        case .unrouted:
            tally("unrouted")
        case .otherShard:
            check(false, "one instance owns every device")
        }
        return nil
    }

    /// Handles `batch` on `lane`, makes the fence writes it asks for and lets the core
    /// answer them, as the lane's shell does (`Lane.decide`).
    static func run(_ lane: inout LaneFixture, _ batch: [Inbound]) -> LaneEffects {
        var effects = lane.handle(batch)
        guard !effects.fenceWrites.isEmpty else { return effects }
        let answered = lane.write(effects)
        effects.direct += answered.direct
        effects.outbox += answered.outbox
        for (counter, amount) in answered.counters.amounts { effects.counters.add(counter, amount) }
        return effects
    }

    // MARK: What the decoders say

    /// What the decoders alone make of a routed message.
    enum Verdict {
        case position(Fix)
        case ignored
        case refused(InputError)
        case command(Command)
        case undecodableCommand(InputError)

        /// Whether the clean lane gets it too.
        var isValid: Bool {
            switch self {
            case .position, .command: true
            case .ignored, .refused, .undecodableCommand: false
            }
        }
    }

    func verdict(of inbound: Inbound) -> Verdict {
        switch inbound.route {
        case .location(let format):
            do throws(InputError) {
                let fix = try hostile.core.configuration.decoder.decode(
                    inbound.message.payload, device: inbound.device, format: format, arrival: inbound.arrival)
                return fix.map(Verdict.position) ?? .ignored
            } catch {
                return .refused(error)
            }
        case .command:
            switch Command.decode(inbound.message.payload, maximumBytes: hostile.core.configuration.maximumPayloadBytes).result {
            case .success(let command): return .command(command)
            case .failure(let error): return .undecodableCommand(error)
            }
        }
    }

    // MARK: Checks

    /// Records a failure unless `condition` holds; the run stops after the message.
    mutating func check(_ condition: Bool, _ what: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard !condition else { return }
        failures += 1
        Issue.record("seed \(seed), message \(number) (\(current)): \(what())", sourceLocation: sourceLocation)
    }

    mutating func tally(_ outcome: String) {
        outcomes[outcome, default: 0] += 1
    }

    /// What of a lane a refused message must leave as it was: the device's record, how
    /// many devices, previews and admitted devices there are, the next timer, the book.
    struct Snapshot: Equatable {
        var record: DeviceRecord?
        var devices: Int
        var previews: Int
        var admitted: Int
        var nextDeadline: Double?
        var revision: Int

        init(_ lane: LaneFixture, _ device: String) {
            record = lane.core.devices[device]
            devices = lane.core.deviceCount
            previews = lane.core.previewCount
            admitted = lane.core.admission.admitted
            nextDeadline = lane.core.nextDeadline
            revision = lane.book.revision
        }
    }

    /// A refused or ignored message changes nothing: nothing to commit or publish, no
    /// occupancy, no fence write (but one `attempted` and refused, for a command), and the
    /// device and the lane as they were.
    mutating func expectUntouched(_ effects: LaneEffects, before: Snapshot, device: String, attempted: Bool = false) {
        check(effects.outbox.isEmpty && effects.saves.isEmpty && effects.forgotten.isEmpty && effects.deliveries.isEmpty
              && effects.occupancy.isEmpty && (attempted || effects.fenceWrites.isEmpty) && effects.answers.isEmpty,
              "a refused message commits or publishes nothing: outbox \(effects.outbox.map(\.topic)), saves \(effects.saves.keys.sorted())")
        let after = Snapshot(hostile, device)
        check(after == before, "a refused message leaves the lane as it was: \(before) became \(after)")
    }

    /// `direct` holds exactly the `expected` reports on `geotify/error` (code, and message
    /// when known), each naming the message's topic and device.
    mutating func checkReports(
        _ direct: [OutboxMessage], _ expected: [(code: ErrorCode, message: String?)], _ inbound: Inbound?, topic: String? = nil
    ) {
        let reports = direct.filter { $0.topic == "geotify/error" }
        check(reports.count == expected.count && direct.count == reports.count,
              "expected \(expected.count) report(s) on geotify/error, found \(direct.map { "\($0.topic) \(String(decoding: $0.payload, as: UTF8.self))" })")
        for (report, (code, message)) in zip(reports, expected) {
            let json = try? JSONParser().parse(report.payload)
            check(json?["error"]?.stringValue == code.rawValue, "the report names \(code.rawValue): \(String(decoding: report.payload, as: UTF8.self))")
            if let message { check(json?["message"]?.stringValue == message, "the report says why: \(message)") }
            check(json?["topic"]?.stringValue == inbound?.message.topic ?? topic, "the report names the topic")
            check(json?["device"]?.stringValue == inbound?.device, "the report names the device")
        }
    }

    /// Whether what is reported once under `key` is reported now, as `LaneCore` keeps
    /// `reportedOnce`: the first time, while fewer than `reportedOnceKept` are kept.
    mutating func reportsOnce(_ key: String) -> Bool {
        guard reported.count < LaneCore.reportedOnceKept else { return false }
        return reported.insert(key).inserted
    }

    /// The admission limit a new `device` would reach now: its owner's, else the bridge's.
    func admissionLimit(of device: String) -> String {
        let owner = Self.owner(of: device)
        let owned = hostile.core.devices.filter { !hostile.book.knows($0.key) && Self.owner(of: $0.key) == owner }.count
        return owned >= hostile.settings.maximumDevicesPerOwner ? "owner \(owner)" : "bridge"
    }

    /// A position the lane took: evaluated, dropped by the rules, or kept as inaccurate;
    /// the only refusal it may carry is the warning that a new device's name differs
    /// from a named one only in letter case. Its device's owner stays within its limit.
    mutating func checkTaken(_ effects: LaneEffects, _ inbound: Inbound) {
        let device = inbound.device
        var warnings: [(ErrorCode, String?)] = []
        for (counter, _) in effects.counters.amounts {
            guard case .errors(let code) = counter else { continue }
            check(code == .unknownDevice && hostile.book.device(matchingIgnoringCase: device) != nil,
                  "a position taken is no error, but counts errors.\(code.rawValue)")
            warnings.append((code, nil))
        }
        let reports = effects.direct.filter { $0.topic == "geotify/error" }
        check(reports.count == warnings.count && effects.direct.count == reports.count, "a position taken reports nothing but the warning")
        guard !hostile.book.knows(device) else { return }
        let owner = Self.owner(of: device)
        let unnamed = hostile.core.devices.filter { !hostile.book.knows($0.key) }
        let owned = unnamed.filter { Self.owner(of: $0.key) == owner }.count
        check(owned <= hostile.settings.maximumDevicesPerOwner,
              "the owner \(owner.debugDescription) has \(owned) devices without fences, past maximumDevicesPerOwner")
        check(unnamed.count <= hostile.settings.maximumDevices, "\(unnamed.count) devices without fences, past maximumDevices")
    }

    /// A command is answered on the device's reply topic, `ok` or not. A refusal counts
    /// `commands_refused.<code>` once and changes nothing; one the decoder refused is also
    /// reported on `geotify/error`, unless the response topic was refused first.
    mutating func checkReply(_ effects: LaneEffects, _ inbound: Inbound, before: Snapshot, undecodable: InputError?) {
        let device = inbound.device
        guard let reply = effects.direct.first(where: { $0.topic == "geotify/reply/\(device)" }),
              let json = try? JSONParser().parse(reply.payload), let ok = json["ok"]?.boolValue
        else { return check(false, "a command is answered on geotify/reply/\(device): \(effects.direct.map(\.topic))") }
        let refusedTopic = Self.refuses(responseTopic: inbound.message.responseTopic, of: device)
        let refusals = effects.counters.amounts.filter { if case .commandsRefused = $0.key { true } else { false } }
        guard !ok else {
            check(undecodable == nil && !refusedTopic, "only a valid command with an allowed response topic is carried out")
            check(refusals.isEmpty && effects.counters[.commandsExecuted] == 1, "a command carried out counts commands_executed: \(effects.counters.amounts)")
            return
        }
        let code = json["error"]?["code"]?.stringValue.flatMap(ErrorCode.init(rawValue:))
        check(code != nil && refusals == [.commandsRefused(code ?? .invalidJSON): 1] && refusals.count == effects.counters.amounts.count,
              "a refused command counts commands_refused.<its code> once and nothing else: \(effects.counters.amounts)")
        expectUntouched(effects, before: before, device: device, attempted: undecodable == nil)
        if refusedTopic {
            check(code == .notAllowed, "a response topic outside the device's reply space refuses the command as not_allowed")
            check(!effects.direct.contains { $0.topic == inbound.message.responseTopic && $0.topic != reply.topic },
                  "nothing goes to a refused response topic")
        }
        guard let undecodable else { return }
        check(refusedTopic ? code == .notAllowed : code == undecodable.code,
              "the reply names the decoder's code \(undecodable.code.rawValue), not \(code?.rawValue ?? "none")")
        let others = effects.direct.filter { $0.topic != reply.topic && $0.topic != inbound.message.responseTopic }
        checkReports(others, refusedTopic ? [] : [(undecodable.code, undecodable.message)], inbound)
    }

    /// Everything the lane would publish can be published: a topic a broker takes (not
    /// empty, no wildcard, NUL or other character mosquitto refuses, at most 65 535
    /// bytes), and replies and reports that are JSON. A topic a broker refuses loses the
    /// message. Fences in the book have identifiers that are one topic level.
    mutating func checkPublishable(_ effects: LaneEffects) {
        for message in effects.outbox + effects.direct {
            check(Self.isPublishable(message.topic), "the bridge would publish to \(message.topic.debugDescription), which no broker takes")
            if message.topic == "geotify/error" || message.topic.hasPrefix("geotify/reply/") {
                check((try? JSONParser().parse(message.payload))?.objectValue != nil, "a report or reply is a JSON object")
            }
        }
        guard !effects.fenceWrites.isEmpty else { return }
        for fence in hostile.book.devices.values.joined() {
            check(!fence.identifier.utf8.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") },
                  "a command added the fence \(fence.identifier.debugDescription), which is not one topic level")
        }
    }

    /// The bookkeeping that hostile input could grow stays within its bounds.
    mutating func checkBounds() {
        let core = hostile.core
        check(core.reportedOnce.count <= LaneCore.reportedOnceKept, "reportedOnce holds \(core.reportedOnce.count)")
        check(core.admission.admitted <= hostile.settings.maximumDevices, "\(core.admission.admitted) devices admitted")
        check(core.deviceCount <= hostile.book.devices.count + hostile.settings.maximumDevices, "\(core.deviceCount) devices kept")
        check(core.previewCount <= core.configuration.previewsPerLane, "\(core.previewCount) previews kept")
    }

    // MARK: Hostile against clean

    /// What the two lanes decided for the same valid input is the same: what is
    /// committed and published, counted, and (when `direct`) the replies.
    mutating func compare(_ hostile: LaneEffects, _ clean: LaneEffects, direct: Bool) {
        check(hostile.outbox == clean.outbox, "published \(hostile.outbox.map(\.topic)), alone \(clean.outbox.map(\.topic))")
        check(hostile.saves == clean.saves, "saved \(hostile.saves.keys.sorted()), alone \(clean.saves.keys.sorted())")
        check(hostile.forgotten == clean.forgotten, "forgot \(hostile.forgotten), alone \(clean.forgotten)")
        check(hostile.deliveries == clean.deliveries && hostile.occupancy == clean.occupancy, "deliveries or occupancy differ")
        check(hostile.counters == clean.counters, "counted \(hostile.counters.amounts), alone \(clean.counters.amounts)")
        guard direct else { return }
        // Reports on geotify/error are said once: garbage may have used up what
        // `reportedOnce` keeps, so they are checked message by message, not here.
        let replies = { (effects: LaneEffects) in effects.direct.filter { $0.topic != "geotify/error" } }
        check(replies(hostile) == replies(clean), "replied \(replies(hostile).map(\.topic)), alone \(replies(clean).map(\.topic))")
    }

    mutating func compareRecords(of device: String) {
        let hostileRecord = hostile.core.devices[device]
        let cleanRecord = clean.core.devices[device]
        check(hostileRecord == cleanRecord, "\(device.debugDescription) is \(String(describing: hostileRecord)), alone \(String(describing: cleanRecord))")
    }

    /// Both lanes hold the same devices in the same state, the same fences, previews,
    /// admissions and timers; and what the hostile one reported once is what it should.
    mutating func compareEverything() {
        current = "the lanes after \(number) messages"
        let records = { (lane: LaneFixture) in Dictionary(lane.core.devices.map { ($0.key, $0.value) }) { first, _ in first } }
        let hostileRecords = records(hostile)
        let cleanRecords = records(clean)
        check(hostileRecords == cleanRecords, "the devices differ: \(Set(hostileRecords.keys).symmetricDifference(cleanRecords.keys).sorted())"
              + " and \(hostileRecords.keys.filter { hostileRecords[$0] != cleanRecords[$0] }.sorted())")
        check(hostile.book.devices == clean.book.devices, "the fences differ")
        check(hostile.core.previewCount == clean.core.previewCount, "the previews differ")
        check(hostile.core.admission.admitted == clean.core.admission.admitted, "the admissions differ")
        check(hostile.core.nextDeadline == clean.core.nextDeadline, "the timers differ")
        if modelsReports { check(hostile.core.reportedOnce == reported, "reportedOnce is not what was reported once") }
        checkBounds()
    }

    /// The last fixes kept only in memory are the same, and saved the same.
    mutating func compareLazySaves() {
        var hostileSaves = LaneEffects()
        var cleanSaves = LaneEffects()
        hostile.core.saveFixes(into: &hostileSaves)
        clean.core.saveFixes(into: &cleanSaves)
        check(hostileSaves.saves == cleanSaves.saves, "the lazily saved fixes differ")
    }

    /// The mix reached every kind of outcome, the signal included (once the run went
    /// through: a run stopped by a failure says so already).
    func expectMix() {
        guard failures == 0 else { return }
        let kinds = outcomes.keys
        #expect(outcomes["position taken", default: 0] + outcomes["position", default: 0] > 300, "\(outcomes)")
        for kind in ["ignored", "refused by the router", "unrouted", "command", "position refused: invalid_json",
                     "position refused: no_decryption_key", "position refused: undecryptable", "position refused: too_many_devices",
                     "command refused: invalid_json"] {
            #expect(kinds.contains(kind), "no \(kind) in \(outcomes)")
        }
        #expect(outcomes.keys.filter { $0.hasPrefix("position refused") }.count >= 12, "\(outcomes)")
    }

    // MARK: The rules, byte by byte

    /// Why `device` is not a usable device identifier by its bytes, as MQTT sees it: a
    /// wildcard or NUL, an empty level, too long; or bytes other than its normalization
    /// form C's, which would make it one device with a name the broker tells apart.
    static func problem(device: String) -> String? {
        let bytes = Array(device.utf8)
        if bytes.isEmpty || bytes.count > Identifier.maximumLength { return "its length, \(bytes.count) bytes" }
        if bytes.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") || $0 == 0 }) { return "a wildcard in \(device.debugDescription)" }
        if bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            return "an empty level in \(device.debugDescription)"
        }
        if Array(device.precomposedStringWithCanonicalMapping.utf8) != bytes { return "not in form C: \(device.debugDescription)" }
        return nil
    }

    /// The owner of a device by its bytes: its first topic level.
    static func owner(of device: String) -> String {
        String(decoding: device.utf8.prefix { $0 != UInt8(ascii: "/") }, as: UTF8.self)
    }

    /// Whether a broker takes `topic` as a topic name.
    static func isPublishable(_ topic: String) -> Bool {
        let bytes = topic.utf8
        return !bytes.isEmpty && bytes.count <= 65_535 && !bytes.contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }
            && ForbiddenCharacter.first(in: topic) == nil
    }

    /// Whether a command with `responseTopic` is refused for it (docs/mqtt.md): it must be
    /// the device's reply topic or below it, and publishable.
    static func refuses(responseTopic: String?, of device: String) -> Bool {
        guard let responseTopic else { return false }
        let base = Array("geotify/reply/\(device)".utf8)
        let bytes = Array(responseTopic.utf8)
        return !(bytes == base || bytes.starts(with: base + [UInt8(ascii: "/")])) || !isPublishable(responseTopic)
    }

    /// A message as a failure names it: topic and the start of the payload, escaped.
    static func describe(_ message: MQTTMessage) -> String {
        let payload = String(decoding: message.payload.prefix(160), as: UTF8.self)
        let response = message.responseTopic.map { " response topic \($0.debugDescription)" } ?? ""
        return "\(message.topic.prefix(120).debugDescription) \(payload.debugDescription) (\(message.payload.count) bytes)\(response)"
    }
}
