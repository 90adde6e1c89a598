import Foundation
import GeotifyBridge
import GeotifyJSON

/// Issue 10's yardstick: the same traffic (`SideBySideWorkload`, gen.py's shape) through
/// a consumer that does nothing, `mosquitto_sub -t 'owntracks/#'`, and through the
/// `geotify` release binary, each on a fresh mosquitto (no persistence, no queue limit),
/// in alternating order over several rounds of one run, so that whatever else the
/// machine does falls on both. The traffic is published at QoS 0 as fast as one
/// libmosquitto client can (`BulkPublisher`).
///
/// Per consumer: messages handled per second from the first publish to the last message
/// handled (mosquitto_sub's exit after its `-C` count; the bridge's sentinel
/// notifications, one per lane), CPU microseconds per message over the same span (all
/// threads, from `/proc/<pid>/stat` and `wait4`), peak RSS, and the ratios. Every run is
/// checked: every message handled, and the bridge's transitions and notifications equal
/// to what `BridgeExpectation` works out with the same decoder and evaluator. Then the
/// p99 publish → notification latency with the traffic paced at half the bridge's rate.
struct SideBySideScenario {
    let options: BenchOptions

    /// Seconds of traffic the latency run sends.
    private static let latencySeconds = 10.0

    func run() -> [ResultRow] {
        do {
            return try measure()
        } catch {
            return [ResultRow(scenario: "sidebyside", measure: "side by side", value: 0, unit: .perSecond, detail: "could not run: \(error)")]
        }
    }

    private func measure() throws -> [ResultRow] {
        let settings = options.sideBySide
        let geotify = settings.geotifyPath
        guard FileManager.default.isExecutableFile(atPath: geotify) else {
            throw BenchError("no geotify binary at \(geotify): build it with `swift build -c release --product geotify`, or name one with --geotify PATH")
        }
        let lanes = Settings().lanes
        let now = BenchClock.wall()
        let workload = SideBySideWorkload(
            devices: settings.devices, fencesPerDevice: settings.fencesPerDevice, messages: settings.messages(quick: options.quick),
            lanes: lanes, seed: options.seed, now: now)
        let expectation = try BridgeExpectation(workload, now: now)
        Progress.note("sidebyside: \(ResultRow.count(workload.traffic.count)) messages (\(workload.sentinels.count) sentinels), \(ResultRow.count(workload.devices)) devices × \(workload.fencesPerDevice) fences; expected \(ResultRow.count(expectation.transitions)) transitions (gen.py's plain rule: \(ResultRow.count(workload.plainRuleTransitions))); geotify \(geotify), \(lanes) lanes")

        let kept = settings.directory.map { URL(fileURLWithPath: $0) }
        let directory = kept ?? FileManager.default.temporaryDirectory.appendingPathComponent("geotify-bench-sidebyside-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if kept == nil { try? FileManager.default.removeItem(at: directory) } }
        let fencesPath = directory.appendingPathComponent("fences.json").path
        try workload.fenceFile.write(toFile: fencesPath, atomically: true, encoding: .utf8)
        if kept != nil {
            try Data(workload.traffic.lines()).write(to: directory.appendingPathComponent("traffic.txt"))
        }

        let loadBefore = ProcessProbe.loadAverage()
        var measurements: [ConsumerMeasurement] = []
        for round in 0..<settings.rounds(quick: options.quick) {
            let order: [ConsumerMeasurement.Consumer] = round % 2 == 0 ? [.mosquittoSub, .geotify] : [.geotify, .mosquittoSub]
            for (position, consumer) in order.enumerated() {
                let measurement = switch consumer {
                case .mosquittoSub: try measureSubscriber(workload, round: round, position: position)
                case .geotify:
                    try measureBridge(
                        workload, expectation, geotify: geotify, fencesPath: fencesPath, lanes: lanes, round: round, position: position)
                }
                Progress.note("sidebyside: \(measurement.summary)")
                measurements.append(measurement)
            }
        }
        let bridgeRate = SideBySideScenario.median(measurements.filter { $0.consumer == .geotify }.map(\.perSecond))
        let latencyRate = settings.latencyRate ?? max(500, bridgeRate / 2)
        let latency = try measureLatency(workload, geotify: geotify, fencesPath: fencesPath, lanes: lanes, rate: latencyRate)
        Progress.note("sidebyside: latency at \(ResultRow.format(latency.rate, .perSecond)): \(latency.summary)")
        let brokerLatency = try measureBrokerLatency(workload, rate: latencyRate)
        Progress.note("sidebyside: latency of the broker alone at \(ResultRow.format(brokerLatency.rate, .perSecond)): \(brokerLatency.summary)")
        if let directory = settings.perfDirectory {
            try profile(workload, geotify: geotify, fencesPath: fencesPath, lanes: lanes, into: directory)
        }
        let result = SideBySideResult(
            workload: workload, expectation: expectation, lanes: lanes, geotify: geotify, seed: options.seed,
            loadBefore: loadBefore, measurements: measurements, latency: latency, brokerLatency: brokerLatency,
            brokerNoDelay: settings.brokerNoDelay, consumersOverTLS: settings.tls, deviceTopics: settings.deviceTopics,
            latencyRequested: settings.latencyRate != nil)
        if let path = settings.jsonPath {
            try Data((JSONWriter(pretty: true).string(result.json) + "\n").utf8).write(to: URL(fileURLWithPath: path))
            Progress.note("sidebyside: wrote \(path)")
        }
        return result.rows
    }

    /// What the processes involved had spent when publishing began.
    private struct Start {
        var time: Double
        var load: Double
        var consumerCPU: Double
        var brokerCPU: Double
        var benchCPU: Double

        init(consumer: MeasuredProcess, broker: BrokerProcess) throws {
            guard let consumerCPU = consumer.cpuSeconds(), let brokerCPU = ProcessProbe.cpuSeconds(of: broker.pid) else {
                throw BenchError("\(consumer.name) or the broker ended before the traffic was sent")
            }
            load = ProcessProbe.loadAverage()
            self.consumerCPU = consumerCPU
            self.brokerCPU = brokerCPU
            benchCPU = ProcessProbe.ownCPUSeconds()
            time = BenchClock.now()
        }
    }

    /// A fresh broker for one run: no queue limit, `--broker-nodelay`'s setting, and with
    /// `--tls` a TLS listener the consumers connect to (the publishers keep the plain one).
    private func makeBroker() throws -> BrokerProcess {
        try BrokerProcess(maximumQueued: 0, noDelay: options.sideBySide.brokerNoDelay, tls: options.sideBySide.tls)
    }

    /// `mosquitto_sub -C <all messages>`: it exits on the last one, and `wait4` gives its
    /// CPU to that moment.
    private func measureSubscriber(_ workload: SideBySideWorkload, round: Int, position: Int) throws -> ConsumerMeasurement {
        let broker = try makeBroker()
        defer { broker.stop() }
        let total = workload.traffic.count
        let client = "geotify-bench-sub-\(getpid())"
        let subscriber = try MeasuredProcess(
            BrokerProcess.executable("mosquitto_sub", in: ["/usr/bin"]),
            ["-h", "127.0.0.1", "-p", String(broker.tls?.port ?? broker.port), "-i", client, "-t", "owntracks/#", "-C", String(total)]
                + (broker.tls.map { ["--cafile", $0.caFile] } ?? []))
        defer { subscriber.stop() }
        guard BenchClock.wait(timeout: 10, until: { broker.hasSubscription(client: client, filter: "owntracks/#") }) else {
            throw BenchError("mosquitto_sub did not subscribe")
        }
        var problems = SideBySideScenario.identityProblems(subscriber)
        let threads = ProcessProbe.status(of: subscriber.pid, "Threads")
        let publisher = try BulkPublisher(port: broker.port)
        defer { publisher.close() }
        let start = try Start(consumer: subscriber, broker: broker)
        let report = try publisher.publish(workload.traffic)
        let (exit, peak) = subscriber.waitForExit(timeout: max(60, Double(total) / 2_000))
        let end = exit?.time ?? BenchClock.now()
        let brokerCPU = (ProcessProbe.cpuSeconds(of: broker.pid) ?? start.brokerCPU) - start.brokerCPU
        let benchCPU = ProcessProbe.ownCPUSeconds() - start.benchCPU
        if exit?.succeeded != true { problems.append("mosquitto_sub did not get all \(total) messages") }
        return ConsumerMeasurement(
            consumer: .mosquittoSub, round: round, position: position, pid: subscriber.pid, loadBefore: start.load,
            published: total, handled: exit?.succeeded == true ? total : 0, seconds: end - start.time,
            cpuSeconds: (exit?.cpuSeconds ?? start.consumerCPU) - start.consumerCPU, peakResidentBytes: peak,
            threads: threads, publish: report, brokerCPUSeconds: brokerCPU, benchCPUSeconds: benchCPU, problems: problems)
    }

    /// The bridge: done when every lane's sentinel notification has arrived; CPU and peak
    /// RSS read from /proc right then, the counters from the next statistics.
    private func measureBridge(
        _ workload: SideBySideWorkload, _ expectation: BridgeExpectation, geotify: String, fencesPath: String, lanes: Int,
        round: Int, position: Int
    ) throws -> ConsumerMeasurement {
        let broker = try makeBroker()
        defer { broker.stop() }
        let total = workload.traffic.count
        let bridge = try GeotifyProcess(
            executable: geotify, broker: broker, fencesPath: fencesPath, lanes: lanes, limits: workload.limits,
            deviceTopics: options.sideBySide.deviceTopics, filters: workload.sentinels.map { "geotify/event/\($0)" })
        defer { bridge.stop() }
        var problems = SideBySideScenario.identityProblems(bridge.process)
        let publisher = try BulkPublisher(port: broker.port)
        defer { publisher.close() }
        let start = try Start(consumer: bridge.process, broker: broker)
        let report = try publisher.publish(workload.traffic)
        // Done when every sentinel has come (checked every millisecond: the end time is
        // the observer's, so this only delays the CPU reading, while the bridge is idle);
        // given up when the bridge's statistics, looked at every second, show no progress
        // for 20 s.
        var progress = (handled: -1, time: BenchClock.now(), checked: BenchClock.now())
        let done = BenchClock.wait(timeout: max(120, Double(total) / 500)) {
            if bridge.observer.count >= workload.sentinels.count { return true }
            let now = BenchClock.now()
            guard now - progress.checked >= 1 else { return false }
            progress.checked = now
            let handled = bridge.stats.map { GeotifyProcess.handled($0.counters) } ?? 0
            if handled != progress.handled { (progress.handled, progress.time) = (handled, now) }
            return now - progress.time > 20 || bridge.process.exit != nil
        } && bridge.observer.count >= workload.sentinels.count
        let end = done ? (bridge.observer.lastArrival ?? BenchClock.now()) : BenchClock.now()
        let cpu = bridge.process.cpuSeconds()
        let peak = bridge.process.peakResidentBytes()
        let threads = ProcessProbe.status(of: bridge.process.pid, "Threads")
        let brokerCPU = (ProcessProbe.cpuSeconds(of: broker.pid) ?? start.brokerCPU) - start.brokerCPU
        let benchCPU = ProcessProbe.ownCPUSeconds() - start.benchCPU
        if !done { problems.append("only \(bridge.observer.count) of \(workload.sentinels.count) sentinel notifications came") }
        // The statistics of a moment after the end hold every count of the run.
        let endWall = BenchClock.wall()
        let fresh = BenchClock.wait(timeout: 3 * GeotifyProcess.statsInterval + 2, interval: 0.01) { (bridge.stats?.time ?? 0) > endWall }
        if !fresh {
            let age = bridge.stats.map { "the last came \(ResultRow.decimal(endWall - $0.time, 1)) s before the end" } ?? "none came"
            problems.append("no statistics after the run (\(age); the counters below are from then): is the bridge stuck?")
        }
        let counters = bridge.stats?.counters ?? [:]
        let handled = GeotifyProcess.handled(counters)
        let checks: [(String, Int, Int)] = [
            ("messages received", counters["messages_received"] ?? 0, total),
            ("messages handled", handled, total),
            ("fixes evaluated", counters["fixes_evaluated"] ?? 0, expectation.fixes),
            ("transitions", counters["transitions"] ?? 0, expectation.transitions),
            ("notifications", counters["notifications"] ?? 0, expectation.notifications),
        ]
        for (name, got, expected) in checks where got != expected {
            problems.append("\(name): \(got), expected \(expected)")
        }
        for (name, value) in counters where name.hasPrefix("errors.") && value > 0 {
            problems.append("\(name): \(value)")
        }
        if let exit = bridge.stop(), !exit.succeeded {
            problems.append(exit.status & 0x7F == SIGKILL
                ? "geotify did not stop within 20 s of SIGTERM and was killed"
                : "geotify did not stop cleanly (wait status \(exit.status))")
        }
        return ConsumerMeasurement(
            consumer: .geotify, round: round, position: position, pid: bridge.process.pid, loadBefore: start.load,
            published: total, handled: handled, seconds: end - start.time,
            cpuSeconds: (cpu ?? start.consumerCPU) - start.consumerCPU, peakResidentBytes: peak ?? 0, threads: threads,
            publish: report, brokerCPUSeconds: brokerCPU, benchCPUSeconds: benchCPU, counters: counters, problems: problems)
    }

    /// What the latency run found.
    struct Latency: Sendable {
        var rate: Double
        var sent: Int
        /// Seconds from send to arrival of each message timed (notifications, or for the
        /// broker alone the positions themselves).
        var latencies: [Double]
        /// How far behind its schedule the publisher ended.
        var publisherLag: Double
        /// The segment size the publisher's kernel used (`TCP_MAXSEG` once connected); 0
        /// for an `MQTTClient` (`--publisher-mqttclient`).
        var publisherSegment: Int
        /// What ran meanwhile, from the first timed message sent to the last (`Load`).
        var load: Load?
        var problems: [String]
        /// The bridge's own latency, from a message's arrival to its commit, in each of
        /// its statistics reports (every `GeotifyProcess.statsInterval`) while the timed
        /// messages were sent and handled: what of the latency is the bridge's before
        /// its publish goes back through the broker. Empty for the broker alone.
        var bridgeReports: [LatencyHistogram.Summary] = []

        func percentile(_ fraction: Double) -> Double {
            let sorted = latencies.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
        }

        var summary: String {
            "p50 \(ResultRow.format(percentile(0.5) * 1_000, .milliseconds)), p99 \(ResultRow.format(percentile(0.99) * 1_000, .milliseconds)), max \(ResultRow.format((latencies.max() ?? 0) * 1_000, .milliseconds)) over \(ResultRow.count(latencies.count)) timed of \(ResultRow.count(sent)) sent; publisher \(ResultRow.format(publisherLag * 1_000, .milliseconds)) behind\(publisherSegment > 0 ? ", in segments of \(ResultRow.count(publisherSegment)) B" : ", through an MQTTClient")"
                + (load.map { "; while sending, " + $0.summary } ?? "")
                + bridgeSummary
                + (problems.isEmpty ? "" : "; PROBLEMS: " + problems.joined(separator: "; "))
        }

        /// The bridge's own arrival-to-commit latency over its reports, or nothing.
        private var bridgeSummary: String {
            guard !bridgeReports.isEmpty else { return "" }
            let p99s = bridgeReports.map(\.p99).sorted()
            return "; the bridge's own, arrival to commit, in its \(bridgeReports.count) reports: p99 median "
                + "\(ResultRow.format(p99s[p99s.count / 2] * 1_000, .milliseconds)), highest "
                + "\(ResultRow.format(p99s[p99s.count - 1] * 1_000, .milliseconds)), max "
                + "\(ResultRow.format((bridgeReports.map(\.maximum).max() ?? 0) * 1_000, .milliseconds))"
        }
    }

    /// A fresh bridge gets the workload's first messages paced at `rate`, each stamped
    /// with its send time as `tst` (as the e2e scenario does): one fix per device to warm
    /// up, then 10 s of traffic, in which each notification's latency is its arrival
    /// minus that time.
    private func measureLatency(_ workload: SideBySideWorkload, geotify: String, fencesPath: String, lanes: Int, rate: Double) throws -> Latency {
        let broker = try makeBroker()
        defer { broker.stop() }
        let bridge = try GeotifyProcess(
            executable: geotify, broker: broker, fencesPath: fencesPath, lanes: lanes, limits: workload.limits,
            deviceTopics: options.sideBySide.deviceTopics, filters: ["geotify/event/#"])
        defer { bridge.stop() }
        let publishers = try latencyPublisher(port: broker.port)
        defer { publishers.stop() }
        // Warm-up: every device's first fix (which creates its state and notifies nothing),
        // then the timed messages.
        let locations = workload.traffic.count - workload.sentinels.count
        let warmUp = min(locations, workload.devices)
        let count = min(locations, warmUp + Int(rate * SideBySideScenario.latencySeconds))
        var problems: [String] = []
        let drain = { (sent: Int) -> Bool in
            BenchClock.wait(timeout: 30, interval: 0.01) {
                guard let stats = bridge.stats else { return false }
                return GeotifyProcess.handled(stats.counters) >= sent && bridge.observer.count >= (stats.counters["notifications"] ?? 0)
            }
        }
        let warm = publishers.send((0..<warmUp).map { workload.traffic.prepared($0) }, rate: rate)
        if !drain(warmUp) { problems.append("the warm-up did not drain within 30 s") }
        // The warm-up's first fixes announce every device's presence in all its fences
        // (20 000 retained messages): the timed traffic starts once the bridge has sent
        // them.
        if !SideBySideScenario.waitUntilCaughtUp(bridge, handled: warmUp) { problems.append("the bridge did not catch up within 30 s of the warm-up") }
        // Retained last values go at QoS 0 (since December 2026): the bridge is done with
        // them once they are written, the broker only once it has read them all.
        if !ProcessProbe.waitUntilIdle(cpu: { ProcessProbe.cpuSeconds(of: broker.pid) }) { problems.append("the broker did not settle within 30 s of the warm-up") }
        bridge.observer.startRecording(since: BenchClock.wall())
        let timed = (warmUp..<count).map { workload.traffic.prepared($0) }
        let (report, load) = Latency.Load.during(broker: broker.pid, consumer: bridge.process.pid) { publishers.send(timed, rate: rate) }
        if !drain(count) { problems.append("not drained within 30 s") }
        let latencies = bridge.observer.stopRecording()
        if warm.failed + report.failed > 0 { problems.append("\(warm.failed + report.failed) publishes failed") }
        let reports = bridge.observer.keptWhileRecording(on: "geotify/stats").compactMap { try? StatsReport(parsing: $0).latency }
        return Latency(
            rate: rate, sent: report.sent, latencies: latencies, publisherLag: report.lag, publisherSegment: publishers.segmentSize,
            load: load, problems: problems,
            bridgeReports: reports)
    }

    /// Waits (at most 30 s) until the bridge's statistics say it has handled `handled`
    /// messages and has nothing pending with the broker; for a binary whose statistics
    /// have no `pending` (earlier versions), until its CPU time stands still.
    private static func waitUntilCaughtUp(_ bridge: GeotifyProcess, handled: Int) -> Bool {
        var reportsPending = true
        let caughtUp = BenchClock.wait(timeout: 30, interval: 0.05) {
            guard let stats = bridge.stats, GeotifyProcess.handled(stats.counters) >= handled else { return false }
            guard let pending = stats.pending else {
                reportsPending = false
                return true
            }
            return pending == 0
        }
        return caughtUp && (reportsPending || ProcessProbe.waitUntilIdle { bridge.process.cpuSeconds() })
    }

    /// The latency run's publisher: one `SocketPublisher` with the chosen segment size,
    /// or with `--publisher-mqttclient` one `MQTTClient` at QoS 0.
    private func latencyPublisher(port: Int) throws -> PositionPublishers {
        let settings = options.sideBySide
        return settings.publisherIsMQTTClient
            ? try PositionPublishers(port: port, count: 1, qos: 0)
            : try PositionPublishers(port: port, count: 1, segmentSize: settings.publisherSegment)
    }

    /// The baseline of the latency run: the same paced positions through a fresh broker,
    /// no bridge, the observer subscribed to one device in twenty, so that it gets about
    /// as many messages as it gets notifications from the bridge (what the broker, the
    /// observer and the machine add by themselves).
    private func measureBrokerLatency(_ workload: SideBySideWorkload, rate: Double) throws -> Latency {
        let broker = try makeBroker()
        defer { broker.stop() }
        let watched = max(1, workload.devices / 20)
        let observer = try ArrivalObserver(port: broker.port, filters: (0..<watched).map { workload.traffic.prepared($0).topic })
        defer { observer.stop() }
        let publishers = try latencyPublisher(port: broker.port)
        defer { publishers.stop() }
        let count = min(workload.traffic.count - workload.sentinels.count, Int(rate * SideBySideScenario.latencySeconds))
        let expected = (0..<count).filter { $0 % workload.devices < watched }.count
        let timed = (0..<count).map { workload.traffic.prepared($0) }
        observer.startRecording(since: BenchClock.wall())
        let (report, load) = Latency.Load.during(broker: broker.pid, consumer: nil) { publishers.send(timed, rate: rate) }
        let drained = BenchClock.wait(timeout: 30, interval: 0.01) { observer.count >= expected }
        return Latency(
            rate: rate, sent: report.sent, latencies: observer.stopRecording(), publisherLag: report.lag,
            publisherSegment: publishers.segmentSize, load: load,
            problems: drained ? [] : ["only \(observer.count) of \(expected) positions arrived within 30 s"])
    }

    /// One more run of the bridge on the same traffic under `perf record` (CPU clock,
    /// DWARF call chains, all its threads) into `directory`/perf.data, for
    /// `scripts/perf-groups`; not counted in the rows, since perf slows the bridge down.
    private func profile(_ workload: SideBySideWorkload, geotify: String, fencesPath: String, lanes: Int, into directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let data = (directory as NSString).appendingPathComponent("perf.data")
        try? FileManager.default.removeItem(atPath: data)
        let broker = try makeBroker()
        defer { broker.stop() }
        let bridge = try GeotifyProcess(
            executable: geotify, broker: broker, fencesPath: fencesPath, lanes: lanes, limits: workload.limits,
            deviceTopics: options.sideBySide.deviceTopics, filters: workload.sentinels.map { "geotify/event/\($0)" })
        defer { bridge.stop() }
        let perf = try MeasuredProcess(
            BrokerProcess.executable("perf", in: ["/usr/bin"]),
            ["record", "-e", "cpu-clock", "-F", "999", "--call-graph", "dwarf,16384", "-p", String(bridge.process.pid), "-o", data],
            output: (directory as NSString).appendingPathComponent("perf.log"))
        defer { perf.stop() }
        // perf writes the file's header once it has attached.
        guard BenchClock.wait(timeout: 10, interval: 0.01, until: {
            ((try? FileManager.default.attributesOfItem(atPath: data))?[.size] as? Int ?? 0) > 0 || perf.exit != nil
        }), perf.exit == nil else {
            throw BenchError("perf record did not start; see \(directory)/perf.log")
        }
        let publisher = try BulkPublisher(port: broker.port)
        defer { publisher.close() }
        _ = try publisher.publish(workload.traffic)
        guard BenchClock.wait(timeout: 300, interval: 0.01, until: { bridge.observer.count >= workload.sentinels.count }) else {
            throw BenchError("the profiled bridge did not handle the traffic within 300 s")
        }
        perf.stop()
        Progress.note("sidebyside: profile in \(data); group it with scripts/perf-groups \(data)")
    }

    /// Whether the process measured is the program started (the kernel keeps the first
    /// 15 bytes of its name), not a shell or wrapper around it.
    private static func identityProblems(_ process: MeasuredProcess) -> [String] {
        let command = ProcessProbe.command(of: process.pid)
        guard let command, command == String(process.name.prefix(15)) else {
            return ["measured process \(process.pid) is \(command ?? "gone"), not \(process.name)"]
        }
        return []
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
