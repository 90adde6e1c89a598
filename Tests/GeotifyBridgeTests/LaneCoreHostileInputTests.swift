import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport

/// A tracker may send anything on any topic it may write: through the router and the
/// pure lane core, thousands of hostile messages a seed (`HostileTraffic`) never trap,
/// every refusal has its code, its counter and its report, a refused message changes no
/// state, what the bridge would publish is always publishable, the bookkeeping stays
/// within its bounds, and the valid positions and commands among the garbage give
/// exactly what they give alone.
///
/// What it found is kept in focused tests: identifiers and response topics read byte by
/// byte (`IdentifierTests`, `LaneCoreCommandTests`), owners by their first MQTT level and
/// ties in eviction broken by identifier (`LaneCoreTests`).
@Suite("Lane core: hostile input")
struct LaneCoreHostileInputTests {
    /// Each message handled alone (a burst of one), checked by itself and against the
    /// clean lane; ticks now and then, and now and then a long pause (previews expire,
    /// idle devices may be evicted).
    @Test("message by message, garbage is refused with its code and changes nothing", arguments: [1, 2, 3] as [UInt64])
    func messageByMessage(seed: UInt64) throws {
        var run = try HostileRun(seed: seed)
        var traffic = HostileTraffic(seed: seed, now: run.hostile.now)
        for number in 0..<2_500 where run.failures == 0 {
            run.pass(seconds: Double(traffic.below(16)), tick: number % 8 == 0 || traffic.chance(2))
            if traffic.chance(1) { run.pass(seconds: Double(400 + traffic.below(600)), tick: true) }
            traffic.now = run.hostile.now
            run.send(traffic.next())
            if number % 64 == 0 { run.compareEverything() }
        }
        run.compareEverything()
        run.compareLazySaves()
        run.expectMix()
    }

    /// Bursts of up to 32 messages, as the network thread hands a lane what arrived
    /// together: a device's positions are sorted by time among garbage, and commands
    /// cut the burst into parts.
    @Test("in bursts as the bridge batches them, garbage changes nothing")
    func inBursts() throws {
        var run = try HostileRun(seed: 4)
        var traffic = HostileTraffic(seed: 4, now: run.hostile.now)
        var sent = 0
        while sent < 3_000 && run.failures == 0 {
            run.pass(seconds: Double(traffic.below(30)), tick: traffic.chance(50))
            traffic.now = run.hostile.now
            let size = 1 + traffic.below(32)
            run.send(burst: (0..<size).map { _ in traffic.next() })
            sent += size
            run.compareEverything()
        }
        run.compareLazySaves()
        run.expectMix()
    }

    /// Encrypted positions of devices without a key are reported once a device, and the
    /// devices remembered as reported are bounded: a flood of made-up devices is counted
    /// in full but reported at most `reportedOnceKept` times.
    @Test func aFloodOfDevicesWithoutAKeyIsCountedInFullAndReportedBoundedly() throws {
        var run = try HostileRun(seed: 5)
        let flood = LaneCore.reportedOnceKept + 100
        var reports = 0
        for number in 0..<flood where run.failures == 0 {
            let message = MQTTMessage(
                topic: "owntracks/flood/\(number)", payload: HostileTraffic.envelope(data: OwnTracksDecryptionTests.pinned))
            reports += run.send(message).direct.count
        }
        run.compareEverything()
        #expect(reports == LaneCore.reportedOnceKept)
        #expect(run.hostile.core.reportedOnce.count == LaneCore.reportedOnceKept)
        #expect(run.outcomes["position refused: no_decryption_key"] == flood)
    }
}

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
        var record: RecordSnapshot?
        var devices: Int
        var previews: Int
        var admitted: Int
        var nextDeadline: Double?
        var revision: Int

        init(_ lane: LaneFixture, _ device: String) {
            record = lane.core.devices[device].map(RecordSnapshot.init)
            devices = lane.core.deviceCount
            previews = lane.core.previewCount
            admitted = lane.core.admission.admitted
            nextDeadline = lane.core.nextDeadline
            revision = lane.book.revision
        }
    }

    /// A device's record, comparable.
    struct RecordSnapshot: Equatable {
        var state: DeviceState
        var ownTracks: Bool
        var lastSeen: Double
        var unsavedFix: Bool
        var deadline: Double?
        var published: Fix?
        var shownTracker: String?
        var warnedCase: Bool

        init(_ record: DeviceRecord) {
            state = record.state
            ownTracks = record.ownTracks
            lastSeen = record.lastSeen
            unsavedFix = record.unsavedFix
            deadline = record.deadline
            published = record.published
            shownTracker = record.shownTracker
            warnedCase = record.warnedCase
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
        let hostileRecord = hostile.core.devices[device].map(RecordSnapshot.init)
        let cleanRecord = clean.core.devices[device].map(RecordSnapshot.init)
        check(hostileRecord == cleanRecord, "\(device.debugDescription) is \(String(describing: hostileRecord)), alone \(String(describing: cleanRecord))")
    }

    /// Both lanes hold the same devices in the same state, the same fences, previews,
    /// admissions and timers; and what the hostile one reported once is what it should.
    mutating func compareEverything() {
        current = "the lanes after \(number) messages"
        let records = { (lane: LaneFixture) in Dictionary(lane.core.devices.map { ($0.key, RecordSnapshot($0.value)) }) { first, _ in first } }
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
