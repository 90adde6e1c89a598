import GeotifyBridge
import GeotifyJSON
import GeotifyStore

/// What the command line asked for.
struct BenchOptions: Sendable {
    /// The scenarios that can be run, in the order they run (memory first, while the heap
    /// is fresh).
    enum Scenario: String, Sendable, CaseIterable {
        case memory, core, decode, lane, e2e, sidebyside

        /// What `all` (and no scenario named) runs: everything that needs nothing but the
        /// harness. `sidebyside` runs the `geotify` release binary and takes minutes, so it
        /// runs when named.
        static let all: [Scenario] = [.memory, .core, .decode, .lane, .e2e]
    }

    var scenarios: [Scenario] = Scenario.all
    var json = false
    var quick = false
    var seed: UInt64 = 6
    /// Set in a child process the memory scenario starts to measure one structure on a
    /// fresh heap (`--memory-probe NAME`, not for people).
    var memoryProbe: MemoryScenario.Probe?
    /// The side-by-side scenario's workload and rounds (`SideBySideScenario`).
    var sideBySide = SideBySideOptions()

    /// Seconds each throughput measurement runs for.
    var budget: Double { quick ? 0.3 : 1.0 }

    static let usage = """
        usage: geotify-bench [core|decode|lane|e2e|memory|sidebyside|all] [--quick] [--json] [--seed N]
                             [--rounds N] [--devices N] [--fences N] [--messages N]
                             [--latency-rate N] [--publisher-segment BYTES] [--publisher-mqttclient] [--broker-nodelay]
                             [--tls] [--device-topics LIST]
                             [--geotify PATH] [--sidebyside-json PATH] [--sidebyside-dir DIR] [--perf DIR]

        Builds a deterministic synthetic workload and prints one table: each row measured
        beside its baseline in the same run. `all` (the default) runs core, decode, lane,
        e2e and memory in a few minutes; --quick shortens each measurement (for a smoke
        run, not for numbers).

        lane runs the lane's pure core (LaneCore) on the side-by-side traffic (--messages,
        --devices, --fences, --device-topics below), without broker, database or thread,
        beside the decoder and the evaluator alone on the same messages; and what
        one device's fence change costs a lane of 100 000 devices (--quick: 10 000).

        sidebyside runs the `geotify` release binary (--geotify, by default the one beside
        this program: swift build -c release --product geotify) and `mosquitto_sub -t
        'owntracks/#'` on the same traffic, each on a fresh mosquitto, in alternating
        order for --rounds rounds (default 3): --messages OwnTracks QoS 0 locations
        (default 200 000) round-robin over --devices devices (default 1 000, at most
        8 000) with --fences circles each (default 20), published as fast as one
        libmosquitto client can; then the p99 latency at half the bridge's rate (or
        --latency-rate messages/s), published over a socket whose segments are at most
        --publisher-segment bytes (default 1 448, a phone's link; 0: loopback's own);
        --publisher-mqttclient publishes through an MQTTClient instead, as the runs
        before 5 December 2026 did (its flow stalled 200 ms now and then).
        --broker-nodelay runs the brokers with set_tcp_nodelay true (mosquitto's
        default is false). --tls connects both consumers (mosquitto_sub --cafile, the
        bridge mqtts://) to a TLS listener of the broker's; the publishers keep a plain
        one. --device-topics state,badge
        sets the bridge's deviceTopics (default: all four). --sidebyside-json writes
        every measurement as JSON; --sidebyside-dir keeps the traffic (traffic.txt,
        fences.json) for replaying with ../shared/bench/pubfile.c; --perf DIR adds one
        bridge run under `perf record` (DIR/perf.data, for scripts/perf-groups).
        --quick: 1 round of 50 000 messages. See docs/side-by-side-benchmark.md.
        """

    /// Parses the arguments (without the program name); nil with a message for a usage error.
    static func parse(_ arguments: [String]) -> Result<BenchOptions, UsageProblem> {
        var options = BenchOptions()
        var chosen: [Scenario]?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--json": options.json = true
            case "--quick": options.quick = true
            case "--seed":
                guard let text = remaining.popFirst(), let seed = UInt64(text) else {
                    return .failure(UsageProblem("--seed needs a whole number"))
                }
                options.seed = seed
            case "--rounds", "--devices", "--fences", "--messages":
                guard let text = remaining.popFirst(), let number = Int(text), number > 0 else {
                    return .failure(UsageProblem("\(argument) needs a whole number above 0"))
                }
                switch argument {
                case "--rounds": options.sideBySide.rounds = number
                case "--devices":
                    guard number <= SideBySideWorkload.maximumDevices else {
                        return .failure(UsageProblem("--devices: at most \(SideBySideWorkload.maximumDevices) (gen.py's grid of homes ends at the pole)"))
                    }
                    options.sideBySide.devices = number
                case "--fences": options.sideBySide.fencesPerDevice = number
                default: options.sideBySide.messages = number
                }
            case "--broker-nodelay": options.sideBySide.brokerNoDelay = true
            case "--tls": options.sideBySide.tls = true
            case "--publisher-mqttclient": options.sideBySide.publisherIsMQTTClient = true
            case "--device-topics":
                // Read as the setting is, so a wrong name gets the setting's refusal.
                let names = remaining.popFirst()?.split(separator: ",").map { JSON.string(String($0)) } ?? []
                guard !names.isEmpty else {
                    return .failure(UsageProblem("--device-topics needs a comma-separated list of \(DeviceTopic.allCases.map(\.rawValue).joined(separator: ", "))"))
                }
                do throws(FenceIssue) {
                    options.sideBySide.deviceTopics = try DeviceTopic.list(.array(names), key: "--device-topics")
                } catch {
                    return .failure(UsageProblem(error.message))
                }
            case "--publisher-segment":
                // Linux takes 88 bytes at least (TCP_MIN_MSS), 0 for loopback's own.
                guard let text = remaining.popFirst(), let bytes = Int(text), bytes == 0 || (88...65_535).contains(bytes) else {
                    return .failure(UsageProblem("--publisher-segment needs 0 (loopback's own) or bytes from 88 to 65535"))
                }
                options.sideBySide.publisherSegment = bytes == 0 ? nil : bytes
            case "--latency-rate":
                guard let text = remaining.popFirst(), let rate = Double(text), rate > 0 else {
                    return .failure(UsageProblem("--latency-rate needs messages per second above 0"))
                }
                options.sideBySide.latencyRate = rate
            case "--geotify", "--sidebyside-json", "--sidebyside-dir", "--perf":
                guard let path = remaining.popFirst(), !path.isEmpty else {
                    return .failure(UsageProblem("\(argument) needs a path"))
                }
                switch argument {
                case "--geotify": options.sideBySide.geotify = path
                case "--sidebyside-json": options.sideBySide.jsonPath = path
                case "--perf": options.sideBySide.perfDirectory = path
                default: options.sideBySide.directory = path
                }
            case "--memory-probe":
                guard let name = remaining.popFirst(), let probe = MemoryScenario.Probe(rawValue: name) else {
                    return .failure(UsageProblem("--memory-probe needs one of \(MemoryScenario.Probe.allCases.map(\.rawValue))"))
                }
                options.memoryProbe = probe
            case "-h", "--help", "help": return .failure(UsageProblem(nil))
            case "all": chosen = Scenario.all
            default:
                guard let scenario = Scenario(rawValue: argument) else {
                    return .failure(UsageProblem("unknown scenario or option \"\(argument)\""))
                }
                chosen = (chosen ?? []) + [scenario]
            }
        }
        if let chosen {
            options.scenarios = Scenario.allCases.filter { chosen.contains($0) }
        }
        let rounds = options.sideBySide.messages(quick: options.quick) / options.sideBySide.devices
        guard rounds >= 1 else {
            return .failure(UsageProblem("--messages must be at least --devices (one fix per device)"))
        }
        guard rounds * SideBySideWorkload.fixInterval <= SideBySideOptions.maximumSpan else {
            return .failure(UsageProblem("--messages / --devices is at most \(SideBySideOptions.maximumSpan / SideBySideWorkload.fixInterval): a device's fixes are 30 s apart and the bridge drops fixes older than a day"))
        }
        return .success(options)
    }
}
