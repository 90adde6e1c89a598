import Foundation
import GeotifyBridge
import GeotifyCore
import GeotifyMQTT
import GeotifyStore

/// The lane's decisions alone, on the side-by-side traffic: `LaneCore.handle` (decoding,
/// evaluation, the state kept, every message built) in batches as the network thread
/// hands them over, with no broker, database or thread, beside `LocationDecoder` and
/// `Evaluator` run alone on the same messages in the same run. What the core costs a
/// message beyond those two is the bookkeeping and message building of the shell's
/// pure part; what the side-by-side run costs beyond the core is the I/O around it.
struct LaneScenario {
    let options: BenchOptions
    /// Messages a batch, about what the network thread reads in one burst at full speed.
    static let batchSize = 64
    /// How many times each part runs; the fastest counts.
    static let passes = 5

    func run() -> [ResultRow] {
        let settings = options.sideBySide
        let now = BenchClock.wall()
        let workload = SideBySideWorkload(
            devices: settings.devices, fencesPerDevice: settings.fencesPerDevice, messages: settings.messages(quick: options.quick),
            lanes: 1, seed: options.seed, now: now)
        var bridgeSettings = Settings()
        bridgeSettings.lanes = 1
        bridgeSettings.homeAssistantEnabled = false
        bridgeSettings.limits.maximumFencesPerDevice = max(bridgeSettings.limits.maximumFencesPerDevice, settings.fencesPerDevice)
        if let topics = settings.deviceTopics { bridgeSettings.deviceTopics = topics }
        let loaded = FenceFile(path: "fences.json", limits: bridgeSettings.limits).parse(Array(workload.fenceFile.utf8))
        guard let parsed = loaded.book else {
            return [failed("the fence file did not load: \(loaded.errors.map(\.description).joined(separator: "; "))")]
        }
        let book = parsed.revised(knownRevisions: [:], currentRevision: 0)
        let inbound = (0..<workload.traffic.count).map { number in
            let (topic, payload) = workload.traffic.message(number)
            return Inbound(
                route: .location(.ownTracks), device: String(topic.dropFirst("owntracks/".count)),
                message: MQTTMessage(topic: topic, payload: payload), arrival: now)
        }
        Progress.note("lane: \(ResultRow.count(inbound.count)) messages, \(ResultRow.count(workload.devices)) devices × \(workload.fencesPerDevice) fences, batches of \(LaneScenario.batchSize)")

        let configuration = LaneConfiguration(settings: bridgeSettings)
        let decoder = configuration.decoder
        var fixes: [Fix] = []
        var decode = Double.infinity
        var evaluate = Double.infinity
        var lane = Double.infinity
        var evaluatorTransitions = 0
        var outbox = 0
        var transitions = 0
        // Each part runs `passes` times from the same start, and its fastest pass counts:
        // one pass takes a tenth of a second, in which a preemption or a page fault shows.
        for _ in 0..<LaneScenario.passes {
            fixes.removeAll(keepingCapacity: true)
            fixes.reserveCapacity(inbound.count)
            decode = min(decode, LaneScenario.time {
                for message in inbound {
                    if let fix = try? decoder.decode(message.message.payload, device: message.device, format: .ownTracks, arrival: now) {
                        fixes.append(fix)
                    }
                }
            })
            var states: [String: DeviceState] = [:]
            evaluatorTransitions = 0
            let evaluator = configuration.evaluator
            evaluate = min(evaluate, LaneScenario.time {
                for fix in fixes {
                    let evaluation = evaluator.evaluate(
                        fix, fences: book.deviceFences(of: fix.device), revision: book.revision, now: now,
                        state: &states[fix.device, default: DeviceState()])
                    evaluatorTransitions += evaluation.transitions.count
                }
            })
            outbox = 0
            transitions = 0
            var core = LaneCore(
                configuration: configuration,
                admission: DeviceAdmission(maximum: bridgeSettings.maximumDevices, perOwner: bridgeSettings.maximumDevicesPerOwner),
                states: [:], book: book, now: now)
            lane = min(lane, LaneScenario.time {
                var start = 0
                while start < inbound.count {
                    let end = min(start + LaneScenario.batchSize, inbound.count)
                    var effects = LaneEffects()
                    core.handle(Array(inbound[start..<end]), book: book, into: &effects)
                    outbox += effects.outbox.count + effects.direct.count
                    transitions += effects.counters[.transitions]
                    start = end
                }
            })
        }
        let count = Double(inbound.count)
        let agree = transitions == evaluatorTransitions && fixes.count == inbound.count
        let detail = "decoding alone \(ResultRow.decimal(decode * 1e9 / count, 0)) ns, evaluation alone \(ResultRow.decimal(evaluate * 1e9 / count, 0)) ns, the rest of the core \(ResultRow.decimal((lane - decode - evaluate) * 1e9 / count, 0)) ns a message; \(ResultRow.count(transitions)) transitions, \(ResultRow.count(outbox)) messages built (\(ResultRow.decimal(Double(outbox) / count, 2)) a position)\(agree ? "" : "; THE CORE AND THE EVALUATOR DISAGREE (\(transitions) against \(evaluatorTransitions) transitions)")"
        return [ResultRow(
            scenario: "lane", measure: "LaneCore.handle a message, side-by-side traffic (thread CPU, fastest of \(LaneScenario.passes))",
            value: lane * 1e9 / count, unit: .nanoseconds,
            baseline: (decode + evaluate) * 1e9 / count, baselineName: "LocationDecoder + Evaluator alone",
            detail: detail)]
            + BookChangeScenario(devices: options.quick ? 10_000 : 100_000).run()
    }

    /// The thread's CPU seconds `body` took.
    private static func time(_ body: () -> Void) -> Double {
        let start = BenchClock.threadCPU()
        body()
        return BenchClock.threadCPU() - start
    }

    private func failed(_ why: String) -> ResultRow {
        ResultRow(scenario: "lane", measure: "LaneCore.handle a message", value: 0, unit: .nanoseconds, detail: why)
    }
}
