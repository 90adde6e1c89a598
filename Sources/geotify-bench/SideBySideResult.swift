import GeotifyBridge
import GeotifyJSON

/// The side-by-side scenario's findings: the rows of the bench's table (medians over
/// the rounds, with the spread and the Geotify/mosquitto_sub ratios in the notes) and
/// the whole record as JSON for BENCHMARKS.md.
struct SideBySideResult {
    var workload: SideBySideWorkload
    var expectation: BridgeExpectation
    var lanes: Int
    var geotify: String
    var seed: UInt64
    var loadBefore: Double
    var measurements: [ConsumerMeasurement]
    var latency: SideBySideScenario.Latency
    /// The same paced positions through the broker alone.
    var brokerLatency: SideBySideScenario.Latency
    /// Whether the brokers ran with `set_tcp_nodelay true`.
    var brokerNoDelay: Bool
    /// Whether the consumers connected over TLS (`--tls`).
    var consumersOverTLS: Bool
    /// The bridge's `deviceTopics` when given (`--device-topics`); nil: all.
    var deviceTopics: [DeviceTopic]?
    /// Whether the latency run's rate was given (`--latency-rate`) rather than half the bridge's.
    var latencyRequested: Bool

    /// The median, least and greatest of one measure over a consumer's rounds.
    struct Spread {
        var median: Double
        var low: Double
        var high: Double

        init(_ values: [Double]) {
            median = SideBySideScenario.median(values)
            low = values.min() ?? 0
            high = values.max() ?? 0
        }

        func text(_ unit: ResultRow.Unit) -> String {
            low == high ? ResultRow.format(low, unit) : "\(ResultRow.format(low, unit))–\(ResultRow.format(high, unit))"
        }

        var json: JSON {
            var object = JSONObject()
            object["median"] = .number(median)
            object["min"] = .number(low)
            object["max"] = .number(high)
            return .object(object)
        }
    }

    private func runs(_ consumer: ConsumerMeasurement.Consumer) -> [ConsumerMeasurement] {
        measurements.filter { $0.consumer == consumer }
    }

    private func spread(_ consumer: ConsumerMeasurement.Consumer, _ value: (ConsumerMeasurement) -> Double) -> Spread {
        Spread(runs(consumer).map(value))
    }

    private var rates: (geotify: Spread, sub: Spread) { (spread(.geotify, \.perSecond), spread(.mosquittoSub, \.perSecond)) }
    private var cpu: (geotify: Spread, sub: Spread) {
        (spread(.geotify, \.cpuMicrosecondsPerMessage), spread(.mosquittoSub, \.cpuMicrosecondsPerMessage))
    }
    private var memory: (geotify: Spread, sub: Spread) {
        (spread(.geotify) { Double($0.peakResidentBytes) }, spread(.mosquittoSub) { Double($0.peakResidentBytes) })
    }

    private var problems: [String] {
        measurements.flatMap { run in run.problems.map { "round \(run.round) \(run.consumer.rawValue): \($0)" } }
            + latency.problems.map { "latency run: \($0)" } + brokerLatency.problems.map { "broker latency run: \($0)" }
    }

    private static func ratio(_ value: Double, _ baseline: Double) -> Double { baseline > 0 ? value / baseline : 0 }

    /// A latency run's load as JSON: shares of all CPUs, and of one core a process.
    private static func json(_ load: SideBySideScenario.Latency.Load?) -> JSON {
        guard let load else { return .null }
        var object = JSONObject()
        if let machine = load.machine {
            object["machineBusy"] = .number(machine.busy)
            object["machineStolen"] = .number(machine.stolen)
        }
        if let broker = load.broker { object["brokerCores"] = .number(broker) }
        if let consumer = load.consumer { object["geotifyCores"] = .number(consumer) }
        if let bench = load.bench { object["benchCores"] = .number(bench) }
        return .object(object)
    }

    var rows: [ResultRow] {
        let rounds = runs(.geotify).count
        let traffic = "\(ResultRow.count(workload.traffic.count)) QoS 0 messages, \(ResultRow.count(workload.devices)) devices × \(workload.fencesPerDevice) fences\(brokerNoDelay ? ", brokers with set_tcp_nodelay" : "")\(consumersOverTLS ? ", consumers over TLS" : "")\(deviceTopics.map { ", Geotify's deviceTopics \($0.map(\.rawValue).joined(separator: "+"))" } ?? "")"
        let checked = problems.isEmpty
            ? "every run checked: all \(ResultRow.count(workload.traffic.count)) messages handled, \(ResultRow.count(expectation.transitions)) transitions and \(ResultRow.count(expectation.notifications)) notifications as the Evaluator gives them (gen.py's plain rule: \(ResultRow.count(workload.plainRuleTransitions)))"
            : "**problems**: " + problems.joined(separator: "; ")
        let publisher = Spread(measurements.map(\.publish.perSecond))
        let brokerSub = spread(.mosquittoSub, \.brokerMicrosecondsPerMessage)
        let brokerGeotify = spread(.geotify, \.brokerMicrosecondsPerMessage)
        return [
            ResultRow(
                scenario: "sidebyside", measure: "messages/s handled, \(traffic), median of \(rounds)",
                value: rates.geotify.median, unit: .perSecond,
                baseline: rates.sub.median, baselineName: "mosquitto_sub -t 'owntracks/#'",
                target: .baselineRatioAtLeast(0.9),
                detail: "Geotify/mosquitto_sub \(ResultRow.decimal(SideBySideResult.ratio(rates.geotify.median, rates.sub.median), 2))×; Geotify \(rates.geotify.text(.perSecond)), mosquitto_sub \(rates.sub.text(.perSecond)); publisher \(publisher.text(.perSecond)); \(checked)"),
            ResultRow(
                scenario: "sidebyside", measure: "CPU per inbound message, all threads (/proc), median of \(rounds)",
                value: cpu.geotify.median, unit: .microseconds,
                baseline: cpu.sub.median, baselineName: "mosquitto_sub",
                target: .baselineRatioAtLeast(1),
                detail: "Geotify/mosquitto_sub \(ResultRow.decimal(SideBySideResult.ratio(cpu.geotify.median, cpu.sub.median), 2))× (target ≤ 1.00×); Geotify \(cpu.geotify.text(.microseconds)), mosquitto_sub \(cpu.sub.text(.microseconds)); the broker's own: \(brokerGeotify.text(.microseconds)) with Geotify, \(brokerSub.text(.microseconds)) with mosquitto_sub"),
            ResultRow(
                scenario: "sidebyside", measure: "peak RSS (VmHWM), median of \(rounds)",
                value: memory.geotify.median, unit: .bytes,
                baseline: memory.sub.median, baselineName: "mosquitto_sub",
                target: .atMost(30 * 1_048_576),
                detail: "Geotify/mosquitto_sub \(ResultRow.decimal(SideBySideResult.ratio(memory.geotify.median, memory.sub.median), 1))×; Geotify \(memory.geotify.text(.bytes)), \(runs(.geotify).compactMap(\.threads).max() ?? 0) threads"),
            ResultRow(
                scenario: "sidebyside", measure: "p99 latency publish → notification, paced",
                value: latency.percentile(0.99) * 1_000, unit: .milliseconds,
                baseline: brokerLatency.percentile(0.99) * 1_000, baselineName: "the broker alone, 1 device in 20 observed",
                target: .atMost(5),
                detail: "at \(ResultRow.format(latency.rate, .perSecond)) (\(latencyRequested ? "--latency-rate" : "half Geotify's median rate")): \(latency.summary); the broker alone: \(brokerLatency.summary)"),
        ]
    }

    var json: JSON {
        var object = JSONObject()
        object["scenario"] = .string("sidebyside")
        object["geotify"] = .string(geotify)
        object["lanes"] = .number(Double(lanes))
        object["seed"] = .number(Double(seed))
        object["loadAverageBefore"] = .number(loadBefore)
        object["brokerTCPNoDelay"] = .bool(brokerNoDelay)
        object["consumersOverTLS"] = .bool(consumersOverTLS)
        object["deviceTopics"] = deviceTopics.map { .array($0.map { .string($0.rawValue) }) } ?? .null
        var traffic = JSONObject()
        traffic["devices"] = .number(Double(workload.devices))
        traffic["fencesPerDevice"] = .number(Double(workload.fencesPerDevice))
        traffic["messages"] = .number(Double(workload.traffic.count))
        traffic["sentinels"] = .array(workload.sentinels.map(JSON.string))
        traffic["expectedFixes"] = .number(Double(expectation.fixes))
        traffic["expectedTransitions"] = .number(Double(expectation.transitions))
        traffic["expectedNotifications"] = .number(Double(expectation.notifications))
        traffic["plainRuleTransitions"] = .number(Double(workload.plainRuleTransitions))
        object["traffic"] = .object(traffic)
        object["runs"] = .array(measurements.map(\.json))
        var summary = JSONObject()
        for (consumer, name) in [(ConsumerMeasurement.Consumer.geotify, "geotify"), (.mosquittoSub, "mosquitto_sub")] {
            var entry = JSONObject()
            entry["messagesPerSecond"] = spread(consumer, \.perSecond).json
            entry["cpuMicrosecondsPerMessage"] = spread(consumer, \.cpuMicrosecondsPerMessage).json
            entry["peakResidentBytes"] = spread(consumer) { Double($0.peakResidentBytes) }.json
            summary[name] = .object(entry)
        }
        var ratios = JSONObject()
        ratios["messagesPerSecond"] = .number(SideBySideResult.ratio(rates.geotify.median, rates.sub.median))
        ratios["cpuMicrosecondsPerMessage"] = .number(SideBySideResult.ratio(cpu.geotify.median, cpu.sub.median))
        ratios["peakResidentBytes"] = .number(SideBySideResult.ratio(memory.geotify.median, memory.sub.median))
        summary["geotifyOverMosquittoSub"] = .object(ratios)
        object["summary"] = .object(summary)
        var timing = JSONObject()
        timing["messagesPerSecond"] = .number(latency.rate)
        timing["rateGiven"] = .bool(latencyRequested)
        timing["sent"] = .number(Double(latency.sent))
        timing["notifications"] = .number(Double(latency.latencies.count))
        timing["p50Milliseconds"] = .number(latency.percentile(0.5) * 1_000)
        timing["p99Milliseconds"] = .number(latency.percentile(0.99) * 1_000)
        timing["maxMilliseconds"] = .number((latency.latencies.max() ?? 0) * 1_000)
        timing["millisecondsInArrivalOrder"] = .array(latency.latencies.map { .number(($0 * 10_000).rounded() / 10) })
        timing["publisherLagSeconds"] = .number(latency.publisherLag)
        timing["publisherSegmentBytes"] = .number(Double(latency.publisherSegment))
        timing["brokerAloneP50Milliseconds"] = .number(brokerLatency.percentile(0.5) * 1_000)
        timing["brokerAloneP99Milliseconds"] = .number(brokerLatency.percentile(0.99) * 1_000)
        timing["bridgeReportsP99Milliseconds"] = .array(latency.bridgeReports.map { .number($0.p99 * 1_000) })
        timing["bridgeReportsMaxMilliseconds"] = .array(latency.bridgeReports.map { .number($0.maximum * 1_000) })
        timing["whileSending"] = SideBySideResult.json(latency.load)
        timing["brokerAloneWhileSending"] = SideBySideResult.json(brokerLatency.load)
        object["latency"] = .object(timing)
        object["problems"] = .array(problems.map(JSON.string))
        return .object(object)
    }
}
