import Foundation
import GeotifyCore
import GeotifyStore

/// Memory and start-up: resident bytes per device of state at 100 000 devices, per
/// circle fence and per fence of index at 1 000 000 fences, and the time to load and
/// index a fence file of 1 000 000 fences.
struct MemoryScenario {
    let options: BenchOptions

    static let fenceCount = 1_000_000
    static let deviceCount = 100_000

    /// A structure measured alone in a child process: the heap reuses what earlier work
    /// freed, which would hide part of what the structure costs.
    enum Probe: String, CaseIterable, Sendable {
        case deviceStates = "device-states"
        case fences
    }

    func run() -> [ResultRow] {
        var rows: [ResultRow] = []
        for probe in Probe.allCases {
            Progress.note("memory: measuring \(probe.rawValue) in a fresh process")
            rows += inChildProcess(probe)
        }
        rows += startUpRows()
        return rows
    }

    /// Runs this executable with `--memory-probe` and reads back its rows (one per line:
    /// measure, value in bytes, detail, tab-separated) from the file its standard output
    /// went to.
    private func inChildProcess(_ probe: Probe) -> [ResultRow] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("geotify-bench-probe-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let data: Data
        do {
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            let process = try MeasuredProcess(
                executable, ["--memory-probe", probe.rawValue, "--seed", String(options.seed)],
                output: output, sharesStandardError: true)
            guard process.waitForExit(timeout: 600).exit?.succeeded == true else {
                process.stop()
                throw BenchError("the probe did not end successfully within 600 s")
            }
            data = try Data(contentsOf: URL(fileURLWithPath: output))
        } catch {
            return [ResultRow(scenario: "memory", measure: probe.rawValue, value: 0, unit: .bytes, detail: "could not run the probe: \(error)")]
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        return lines.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3, let value = Double(fields[1]) else { return nil }
            let target: ResultRow.Target? = switch probe {
            case .deviceStates: .atMost(1_024)
            case .fences: fields[0].contains("FenceIndex") ? .atMost(100) : .atMost(500)
            }
            return ResultRow(scenario: "memory", measure: fields[0], value: value, unit: .bytes, target: target, detail: fields[2])
        }
    }

    /// Measures `probe` in this process and returns the lines `inChildProcess` reads.
    func measure(_ probe: Probe) -> String {
        let rows = switch probe {
        case .deviceStates: [deviceStateRow()]
        case .fences: fenceRows()
        }
        return rows.map { "\($0.measure)\t\($0.value)\t\($0.detail)" }.joined(separator: "\n")
    }

    /// A million circle fences with realistic identifiers and notes, then their index.
    private func fenceRows() -> [ResultRow] {
        Progress.note("memory: \(MemoryScenario.fenceCount) circle fences")
        var random = SeededRandom(seed: options.seed &+ 3)
        let places = Places(count: MemoryScenario.fenceCount / 100, random: &random)
        let before = ResidentMemory.bytes()
        var fences: [Fence] = []
        fences.reserveCapacity(MemoryScenario.fenceCount)
        for number in 0..<MemoryScenario.fenceCount {
            let center = Places.around(places.randomTown(&random), spread: 4_000, &random)
            fences.append(Fence(
                identifier: "site-\(number)", region: .circle(center: center, radius: random.logUniform(50, 5_000)),
                note: "Welcome to site \(number)", eventType: [.onEntry, .onExit]))
        }
        let withFences = ResidentMemory.bytes()
        let buildStart = BenchClock.now()
        let index = FenceIndex(fences)
        let buildSeconds = BenchClock.now() - buildStart
        let withIndex = ResidentMemory.bytes()
        let count = Double(MemoryScenario.fenceCount)
        var probe: [Int] = []
        index.candidates(containing: fences[0].region.center, into: &probe)
        return [
            ResultRow(
                scenario: "memory", measure: "RSS per circle fence, 1 000 000 fences in memory",
                value: Double(withFences - before) / count, unit: .bytes, target: .atMost(500),
                detail: "Fence is \(MemoryLayout<Fence>.stride) B inline; identifier and note (\"site-N\", \"Welcome to site N\") on the heap"),
            ResultRow(
                scenario: "memory", measure: "RSS per fence of FenceIndex, 1 000 000 fences",
                value: Double(withIndex - withFences) / count, unit: .bytes, target: .atMost(100),
                detail: "built in \(ResultRow.format(buildSeconds, .seconds)); \(probe.count) candidates at a fence centre"),
        ]
    }

    /// 100 000 devices' states after a few fixes each, keyed by device as a lane keeps them.
    private func deviceStateRow() -> ResultRow {
        Progress.note("memory: state of \(MemoryScenario.deviceCount) devices")
        var random = SeededRandom(seed: options.seed &+ 4)
        let places = Places(count: 1_000, random: &random)
        let factory = FenceFactory(polygonShare: 0.2)
        // A thousand households, each with 20 fences around its home; devices share them.
        let homes = places.towns.map { Places.around($0, spread: 3_000, &random) }
        let households = homes.map { home in
            (0..<20).map { factory.fence("f\($0)", at: Places.around(home, spread: 6_000, &random), &random) }
        }
        let walkers = (0..<MemoryScenario.deviceCount).map { device in
            Walker(home: homes[device % homes.count], range: 3_000, &random)
        }
        let stream = FixStream(walkers: walkers, steps: 3, &random)
        let evaluator = Evaluator()
        let before = ResidentMemory.bytes()
        var states: [String: DeviceState] = [:]
        var entries = 0
        for number in 0..<stream.count {
            let (device, coordinate, accuracy, timestamp) = stream.fix(number)
            let name = stream.names[device]
            let fix = Fix(device: name, coordinate: coordinate, accuracy: accuracy, timestamp: timestamp)
            var state = states[name] ?? DeviceState()
            _ = evaluator.evaluate(fix, fences: households[device % households.count], revision: 0, now: timestamp, state: &state)
            states[name] = state
        }
        let after = ResidentMemory.bytes()
        for state in states.values { entries += state.fences.count }
        return ResultRow(
            scenario: "memory", measure: "RSS per device of state, 100 000 devices",
            value: Double(after - before) / Double(states.count), unit: .bytes, target: .atMost(1_024),
            detail: "[String: DeviceState] as a lane keeps it; \(ResultRow.decimal(Double(entries) / Double(max(1, states.count)), 2)) fence entries per device; DeviceState is \(MemoryLayout<DeviceState>.stride) B inline, FenceState \(MemoryLayout<FenceState>.stride) B")
    }

    /// Writes a fence file of a million fences (50 000 devices × 20), then times loading
    /// and validating it and indexing all its fences.
    private func startUpRows() -> [ResultRow] {
        Progress.note("memory: writing a fence file of \(MemoryScenario.fenceCount) fences")
        var random = SeededRandom(seed: options.seed &+ 5)
        let places = Places(count: MemoryScenario.fenceCount / 100, random: &random)
        let devices = MemoryScenario.fenceCount / 20
        var text = #"{ "devices": {"#
        text.reserveCapacity(MemoryScenario.fenceCount * 160)
        for device in 0..<devices {
            text += device == 0 ? "\n" : ",\n"
            text += #"  "u\#(device)/phone": ["#
            let home = Places.around(places.randomTown(&random), spread: 4_000, &random)
            for fence in 0..<20 {
                let center = Places.around(home, spread: 3_000, &random)
                text += fence == 0 ? "\n" : ",\n"
                text += #"    { "identifier": "site-\#(fence)", "latitude": \#(String(format: "%.6f", center.latitude)), "longitude": \#(String(format: "%.6f", center.longitude)), "radius": \#(Int(random.logUniform(50, 5_000))), "note": "Welcome to site \#(fence)", "eventType": "onEntryAndExit" }"#
            }
            text += " ]"
        }
        text += "\n} }\n"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("geotify-bench-fences-\(getpid()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            return [ResultRow(scenario: "memory", measure: "start-up", value: 0, unit: .seconds, detail: "could not write \(path)")]
        }
        let fileBytes = text.utf8.count
        text = ""
        Progress.note("memory: loading and indexing the fence file (\(ResultRow.format(Double(fileBytes), .bytes)))")
        let start = BenchClock.now()
        let loaded = FenceFile(path: path).load()
        let loadSeconds = BenchClock.now() - start
        guard let book = loaded.book else {
            return [ResultRow(scenario: "memory", measure: "start-up", value: 0, unit: .seconds,
                              detail: "the fence file did not load: \(loaded.errors.first.map { "\($0)" } ?? "")")]
        }
        let indexStart = BenchClock.now()
        let all = Array(book.devices.values.joined())
        let index = FenceIndex(all)
        let indexSeconds = BenchClock.now() - indexStart
        return [ResultRow(
            scenario: "memory", measure: "start-up: load + validate + index a 1 000 000-fence file",
            value: loadSeconds + indexSeconds, unit: .seconds, target: .atMost(10),
            detail: "load and validate \(ResultRow.format(loadSeconds, .seconds)) (FenceFile), index \(ResultRow.format(indexSeconds, .seconds)) for \(ResultRow.count(index.count)) fences; file \(ResultRow.format(Double(fileBytes), .bytes))")]
    }
}
