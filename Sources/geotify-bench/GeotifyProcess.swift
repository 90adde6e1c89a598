import Foundation
import GeotifyBridge
import GeotifyCore
import GeotifyJSON

/// The bridge as it is deployed: the `geotify` release binary running `geotify run
/// --config` as a child process against a broker of the bench's, with the settings the
/// side-by-side goals are stated for (warnings only, Home Assistant off) and statistics
/// every half second, and an observer on the broker that watches its status, its
/// statistics and the notifications the bench waits for.
final class GeotifyProcess {
    static let statsInterval = 0.5

    let process: MeasuredProcess
    let observer: ArrivalObserver
    let directory: URL

    /// Starts the bridge on `broker` (its TLS listener, if it has one) with the fences at
    /// `fencesPath`, `lanes` lanes and `limits`, the device topics `deviceTopics` (nil: the
    /// default, all), the observer counting messages on `filters`, and waits (up to 60 s)
    /// until the bridge says it is online (after it has subscribed).
    init(
        executable: String, broker: BrokerProcess, fencesPath: String, lanes: Int, limits: FenceLimits,
        deviceTopics: [DeviceTopic]?, filters: [String]
    ) throws {
        directory = broker.directory.appendingPathComponent("geotify")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Written by the JSON writer, so that no path or name can break the document.
        var settings = JSONObject([
            .init(key: "broker", value: .string(broker.tls.map { "mqtts://127.0.0.1:\($0.port)" } ?? "mqtt://127.0.0.1:\(broker.port)")),
            .init(key: "clientId", value: .string("geotify-bench-sidebyside")),
            .init(key: "fences", value: .string(fencesPath)),
            .init(key: "stateDir", value: .string(directory.appendingPathComponent("state").path)),
            .init(key: "logLevel", value: .string("warning")),
            .init(key: "homeassistant", value: .object(JSONObject([.init(key: "enabled", value: .bool(false))]))),
            .init(key: "statsInterval", value: .number(GeotifyProcess.statsInterval)),
            .init(key: "lanes", value: .number(Double(lanes))),
            .init(key: "maximumFencesPerDevice", value: .number(Double(limits.maximumFencesPerDevice))),
        ])
        if let deviceTopics { settings["deviceTopics"] = .array(deviceTopics.map { .string($0.rawValue) }) }
        if let tls = broker.tls { settings["tls"] = .object(JSONObject([.init(key: "caFile", value: .string(tls.caFile))])) }
        let settingsPath = directory.appendingPathComponent("geotify.json").path
        try JSONWriter().string(.object(settings)).write(toFile: settingsPath, atomically: true, encoding: .utf8)
        observer = try ArrivalObserver(port: broker.port, filters: filters, keptTopics: ["geotify/status", "geotify/stats"])
        let log = directory.appendingPathComponent("geotify.log").path
        do {
            process = try MeasuredProcess(executable, ["run", "--config", settingsPath], output: log)
        } catch {
            observer.stop()
            throw error
        }
        let online = BenchClock.wait(timeout: 60, interval: 0.01) {
            observer.lastText(on: "geotify/status") == "online" || process.exit != nil
        }
        guard online, process.exit == nil else {
            stop()
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw BenchError("geotify did not come online: \(text.suffix(2_000))")
        }
    }

    /// The last statistics the bridge published.
    var stats: StatsReport? {
        observer.last(on: "geotify/stats").flatMap { try? StatsReport(parsing: $0) }
    }

    /// Stops the bridge (SIGTERM: a graceful stop) and the observer; how the bridge ended.
    @discardableResult
    func stop() -> MeasuredProcess.Exit? {
        let exit = process.stop()
        observer.stop()
        return exit
    }

    /// Input messages the bridge has dealt with by `counters`: evaluated, dropped or
    /// inaccurate fixes, ignored messages and refused input.
    static func handled(_ counters: [String: Int]) -> Int {
        let inputErrors = Set(ErrorCode.allCases.map { "errors.\($0.rawValue)" })
        return counters.reduce(0) { total, counter in
            counter.key.hasPrefix("fixes_") || counter.key == "messages_ignored" || inputErrors.contains(counter.key)
                ? total + counter.value : total
        }
    }
}
