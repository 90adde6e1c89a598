import Foundation
import GeotifyTestSupport

/// mosquitto running a configuration file of the repository as shipped, except for the
/// lines a test moves (listeners onto free 127.0.0.1 ports, paths into its temporary
/// directory, the log into a file there), so the tests prove the file itself loads and
/// behaves as its comments say.
final class ShippedBrokerProcess {
    private let directory: URL
    private let process: ChildProcess

    /// Starts mosquitto with `config` (a path relative to the repository), each line
    /// equal to a `moves` key replaced by its value and `logLine` by a log file in
    /// `directory`; throws if a line is missing or mosquitto does not start in 10 s.
    init(config: String, moves: [(String, String)], logLine: String, in directory: URL) throws {
        self.directory = directory
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(config), encoding: .utf8)
        var lines = text.components(separatedBy: "\n")
        for (from, to) in moves + [(logLine, "log_dest file \(directory.appendingPathComponent("mosquitto.log").path)")] {
            guard let index = lines.firstIndex(of: from) else {
                throw TestSupportError("\(config) has no line \"\(from)\": update this test")
            }
            lines[index] = to
        }
        if getuid() == 0 {
            lines.append("user root")
        }
        let file = directory.appendingPathComponent("mosquitto.conf")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            executable: mosquittoExecutable() ?? "mosquitto", arguments: ["-c", file.path],
            outputFile: directory.appendingPathComponent("mosquitto.out"))
        self.process = process
        guard waitUntil(timeout: 10, { log.contains(" running") || !process.isRunning }), process.isRunning else {
            let output = (try? String(contentsOf: directory.appendingPathComponent("mosquitto.out"), encoding: .utf8)) ?? ""
            process.terminate(signal: SIGKILL)
            throw TestSupportError("mosquitto did not start with \(config):\n\(log)\(output)")
        }
    }

    /// Starts mosquitto with `config` on `count` ports `freePort()` chose, moving its
    /// lines as `moves(ports)` says (see `init`); returns it with the ports. A port
    /// another process took before mosquitto bound it is tried again with fresh ones
    /// (`withFreePorts`).
    static func onFreePorts(
        _ count: Int, config: String, moves: ([Int]) -> [(String, String)], logLine: String, in directory: URL
    ) throws -> (broker: ShippedBrokerProcess, ports: [Int]) {
        let (broker, ports) = try withFreePorts(count, retrying: { "\($0)".contains("Address already in use") }) { ports in
            try ShippedBrokerProcess(config: config, moves: moves(ports), logLine: logLine, in: directory)
        }
        return (broker, ports)
    }

    /// What mosquitto logged.
    var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("mosquitto.log"), encoding: .utf8)) ?? ""
    }

    /// Stops mosquitto (bounded wait, then SIGKILL) and removes the directory.
    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
