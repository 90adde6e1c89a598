import Foundation
import GeotifyBridge
import GeotifyCore

/// End to end through a real mosquitto on 127.0.0.1: publishers send OwnTracks
/// positions for 10 000 devices at rising rates to find the highest rate handled with
/// no loss and no growing backlog, then at half that rate time each message from its
/// send to the notification it caused. The same traffic through stock C clients that
/// do no work is the baseline.
struct EndToEndScenario {
    let options: BenchOptions

    /// How the ladder sees a system under test.
    struct Probe {
        /// Input messages fully dealt with so far.
        var handled: () -> Int
        /// Output messages the system has published so far (that the observer should get).
        var published: () -> Int
        /// Output messages the observer got so far.
        var observed: () -> Int
        /// Whether everything the system decided to publish has left it (the bridge's
        /// first fixes announce each device's state and presence in every fence).
        var outboundDrained: () -> Bool = { true }
        /// Waits until what has left the system has also been taken by the broker (the
        /// bridge's last values go at QoS 0: written is not yet taken).
        var settle: () -> Bool = { true }
    }

    /// What the ladder found for one system.
    struct Outcome {
        var best: Double
        var steps: [String]
        var latencies: [Double]
        var latencyRate: Double
        var inputs: Int
        var outputs: Int
    }

    private var stepSeconds: Double { options.quick ? 1.5 : 3 }
    /// How long after the last send everything must be handled for a rate to count as sustained.
    private static let grace = 0.5
    private static let drainTimeout = 30.0
    private static let publisherCount = 2

    func run() -> [ResultRow] {
        do {
            Progress.note("e2e: Geotify bridge")
            let geotify = try runGeotify()
            Progress.note("e2e: stock mosquitto_sub | mosquitto_pub")
            let stock = try runStock()
            let p = { (latencies: [Double], fraction: Double) -> Double in
                let sorted = latencies.sorted()
                guard !sorted.isEmpty else { return 0 }
                return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] * 1_000
            }
            return [
                ResultRow(
                    scenario: "e2e", measure: "highest sustained rate, 10 000 devices, no loss",
                    value: geotify.best, unit: .perSecond,
                    baseline: stock.best, baselineName: "mosquitto_sub \\| mosquitto_pub -l",
                    target: .baselineRatioAtLeast(0.9),
                    detail: "Geotify: \(geotify.steps.joined(separator: ", ")); \(geotify.outputs) notifications for \(geotify.inputs) fixes. Stock: \(stock.steps.joined(separator: ", "))"),
                ResultRow(
                    scenario: "e2e", measure: "p99 latency publish → notification at half that rate",
                    value: p(geotify.latencies, 0.99), unit: .milliseconds,
                    baseline: p(stock.latencies, 0.99), baselineName: "stock at half its rate",
                    target: .atMost(5),
                    detail: "at \(ResultRow.format(geotify.latencyRate, .perSecond)): p50 \(ResultRow.format(p(geotify.latencies, 0.5), .milliseconds)), max \(ResultRow.format(geotify.latencies.max().map { $0 * 1_000 } ?? 0, .milliseconds)) over \(geotify.latencies.count) notifications; stock at \(ResultRow.format(stock.latencyRate, .perSecond)): p50 \(ResultRow.format(p(stock.latencies, 0.5), .milliseconds)), max \(ResultRow.format(stock.latencies.max().map { $0 * 1_000 } ?? 0, .milliseconds)) over \(stock.latencies.count)"),
            ]
        } catch {
            return [ResultRow(scenario: "e2e", measure: "end to end", value: 0, unit: .perSecond, detail: "could not run: \(error)")]
        }
    }

    private func runGeotify() throws -> Outcome {
        let broker = try BrokerProcess()
        defer { broker.stop() }
        var workload = EndToEndWorkload(seed: options.seed &+ 7)
        let directory = broker.directory.appendingPathComponent("bridge")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let fencesPath = directory.appendingPathComponent("fences.json").path
        try workload.fenceFile.write(toFile: fencesPath, atomically: true, encoding: .utf8)
        var settings = Settings()
        settings.broker.port = broker.port
        settings.fencesPath = fencesPath
        settings.stateDirectory = directory.appendingPathComponent("state").path
        settings.clientID = "geotify-bench"
        // The default log level, with the lines dropped rather than written to a terminal.
        let bridge = Bridge(settings: settings, logger: Logger(level: .info, sink: { _ in }))
        let observer = try ArrivalObserver(port: broker.port, filters: ["geotify/event/#"], keptTopics: ["geotify/status"])
        defer { observer.stop() }
        let started = BenchClock.now()
        try bridge.start()
        defer { bridge.stop() }
        guard BenchClock.wait(timeout: 120, until: { observer.lastText(on: "geotify/status") == "online" }) else {
            throw BenchError("the bridge did not come online")
        }
        Progress.note("e2e: bridge online after \(ResultRow.format(BenchClock.now() - started, .seconds)) (\(ResultRow.count(EndToEndWorkload.devices * EndToEndWorkload.fencesPerDevice)) fences, \(settings.lanes) lanes)")
        let publishers = try PositionPublishers(port: broker.port, count: EndToEndScenario.publisherCount)
        defer { publishers.stop() }
        let probe = Probe(
            handled: { GeotifyProcess.handled(bridge.counters.snapshot) },
            published: { bridge.counters.value(.notifications) },
            observed: { observer.count },
            outboundDrained: { bridge.outboundDrained },
            settle: { ProcessProbe.waitUntilIdle { ProcessProbe.cpuSeconds(of: broker.pid) } })
        return try ladder(&workload, publishers, observer, probe)
    }

    private func runStock() throws -> Outcome {
        let broker = try BrokerProcess()
        defer { broker.stop() }
        var workload = EndToEndWorkload(seed: options.seed &+ 7)
        let observer = try ArrivalObserver(port: broker.port, filters: ["out"])
        defer { observer.stop() }
        let pipeline = try StockPipeline(port: broker.port)
        defer { pipeline.stop() }
        let publishers = try PositionPublishers(port: broker.port, count: EndToEndScenario.publisherCount)
        defer { publishers.stop() }
        // Ready once a message makes it through.
        guard BenchClock.wait(timeout: 10, until: {
            _ = publishers.send([PositionPublishers.Prepared(topic: "owntracks/bench/probe", prefix: Array(#"{"probe":1,"tst":"#.utf8))], rate: 1)
            return BenchClock.wait(timeout: 0.2) { observer.count > 0 }
        }) else {
            throw BenchError("the stock pipeline passed nothing on")
        }
        let probed = observer.count
        let probe = Probe(handled: { observer.count - probed }, published: { observer.count }, observed: { observer.count })
        return try ladder(&workload, publishers, observer, probe)
    }

    /// Warms up (every device's first fix), then doubles the rate from 2 000/s while it is
    /// sustained, tries once between the last good and the first bad rate, and times
    /// latency at half the best rate.
    private func ladder(
        _ workload: inout EndToEndWorkload, _ publishers: PositionPublishers, _ observer: ArrivalObserver,
        _ probe: Probe
    ) throws -> Outcome {
        let warmUp = step(&workload, publishers, probe, count: EndToEndWorkload.devices, rate: 20_000)
        guard warmUp.drained else { throw BenchError("the warm-up (one fix per device) did not drain") }
        // The ladder measures the steady state: the first fixes' announcements (state,
        // tracker, badge and presence in every fence of each device) must have left first.
        let announcing = BenchClock.now()
        guard BenchClock.wait(timeout: EndToEndScenario.drainTimeout, interval: 0.01, until: probe.outboundDrained) else {
            throw BenchError("the first fixes' announcements did not leave within \(Int(EndToEndScenario.drainTimeout)) s")
        }
        guard probe.settle() else { throw BenchError("the broker did not settle within 30 s of the first fixes' announcements") }
        Progress.note("e2e:   warm-up: one fix per device, its announcements out and taken by the broker \(ResultRow.format(BenchClock.now() - announcing, .seconds)) after the fixes were handled")
        var steps: [String] = []
        var best = 0.0
        var failed: Double?
        var rate = 2_000.0
        while rate <= 512_000 {
            let result = step(&workload, publishers, probe, count: Int(rate * stepSeconds), rate: rate)
            steps.append(result.summary)
            Progress.note("e2e:   \(result.summary)")
            guard result.drained else { break }
            if !result.sustained {
                failed = rate
                break
            }
            best = rate
            rate *= 2
        }
        if let failed, best > 0 {
            let between = ((best * failed).squareRoot() / 100).rounded() * 100
            let result = step(&workload, publishers, probe, count: Int(between * stepSeconds), rate: between)
            steps.append(result.summary)
            Progress.note("e2e:   \(result.summary)")
            if result.sustained { best = between }
        }
        let timedRate = max(500, best / 2)
        observer.startRecording(since: BenchClock.wall())
        let timed = step(&workload, publishers, probe, count: Int(timedRate * stepSeconds * 1.5), rate: timedRate)
        let latencies = observer.stopRecording()
        Progress.note("e2e:   latency run: \(timed.summary), \(latencies.count) timed")
        return Outcome(best: best, steps: steps, latencies: latencies, latencyRate: timedRate, inputs: probe.handled(), outputs: probe.published())
    }

    /// What one paced step did.
    private struct StepResult {
        var rate: Double
        var drained: Bool
        var sustained: Bool
        var summary: String
    }

    private func step(
        _ workload: inout EndToEndWorkload, _ publishers: PositionPublishers, _ probe: Probe, count: Int, rate: Double
    ) -> StepResult {
        let messages = workload.next(count)
        let handledBefore = probe.handled()
        let report = publishers.send(messages, rate: rate)
        let sendEnd = BenchClock.now()
        // Checked every 5 ms: often enough to time the drain, seldom enough not to
        // contend for the bridge's counters.
        let drained = BenchClock.wait(timeout: EndToEndScenario.drainTimeout, interval: 0.005) {
            probe.handled() - handledBefore >= report.sent && probe.observed() >= probe.published()
        }
        let behind = BenchClock.now() - sendEnd
        let kept = report.lag <= 0.05
        let sustained = drained && report.failed == 0 && behind <= EndToEndScenario.grace && kept
        var summary = "\(ResultRow.format(rate, .perSecond)) \(sustained ? "ok" : "no")"
        if !drained {
            summary += " (not drained in \(Int(EndToEndScenario.drainTimeout)) s)"
        } else if !sustained {
            summary += " (done \(ResultRow.format(behind * 1_000, .milliseconds)) after the last send\(kept ? "" : ", publishers \(ResultRow.format(report.lag * 1_000, .milliseconds)) behind")\(report.failed > 0 ? ", \(report.failed) refused" : ""))"
        }
        return StepResult(rate: rate, drained: drained, sustained: sustained, summary: summary)
    }
}
