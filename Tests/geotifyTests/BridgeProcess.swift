import Foundation
import GeotifyTestSupport

/// A `geotify run` process with its own settings file, state directory and topic prefix,
/// so a test can run several bridges on one broker, kill one and start it again.
final class BridgeProcess {
    let name: String
    let directory: URL
    let settingsURL: URL
    private(set) var child: ChildProcess?

    /// Writes the settings (broker on `port`, client id `name`, topic prefix `prefix`
    /// (`name` by default), the fence file or directory `fences`, and the members `extra`,
    /// such as `"notify": {...}`) into `directory`.
    init(name: String, port: Int, fences: URL, directory: URL, prefix: String? = nil, extra: String? = nil) throws {
        self.name = name
        self.directory = directory
        settingsURL = directory.appendingPathComponent("\(name).json")
        base = """
            "broker": "mqtt://127.0.0.1:\(port)", "clientId": "\(name)", "topicPrefix": "\(prefix ?? name)",
             "fences": "\(fences.path)", "stateDir": "state-\(name)", "lanes": 2, "logLevel": "info"
            """
        try writeSettings(extra: extra)
    }

    /// The settings every bridge of a test gets.
    private let base: String

    /// Writes the settings file again with the members `extra`; the next `start()` reads it.
    func writeSettings(extra: String?) throws {
        try "{\(base)\(extra.map { ",\n \($0)" } ?? "")}".write(to: settingsURL, atomically: true, encoding: .utf8)
    }

    var stateDirectory: String { directory.appendingPathComponent("state-\(name)").path }

    var statePath: String { directory.appendingPathComponent("state-\(name)/state.sqlite").path }
    var logURL: URL { directory.appendingPathComponent("\(name).log") }

    func start() throws {
        child = try ChildProcess(
            executable: geotifyExecutable.path, arguments: ["run", "--config", settingsURL.path], outputFile: logURL)
    }

    /// Kills the process with `signal` and waits for it.
    func kill(_ signal: Int32 = SIGKILL) {
        child?.terminate(signal: signal)
        _ = child?.waitForExit(timeout: 20)
    }

    /// The outbox marks (`outbox.handed` beside the database): every row up to `handed`
    /// was handed to the broker, every row up to `acknowledged` acknowledged.
    func outboxMarks() throws -> (handed: Int64, acknowledged: Int64) {
        let path = directory.appendingPathComponent("state-\(name)/outbox.handed").path
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count >= 16 else { return (0, 0) }
        let words = data.withUnsafeBytes { raw in (raw.loadUnaligned(fromByteOffset: 0, as: Int64.self), raw.loadUnaligned(fromByteOffset: 8, as: Int64.self)) }
        return words
    }

    /// Sends `signal` to the running process (SIGHUP: reload the fence file).
    func signal(_ signal: Int32) {
        child?.terminate(signal: signal)
    }

    /// The log so far.
    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// The id of the newest row ever added to its outbox (pruning keeps the sequence).
    func newestOutboxRow() throws -> Int64 {
        try query("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").first.flatMap { Int64($0) } ?? 0
    }

    /// Runs an SQL query on the state database with the sqlite3 shell; one line a row.
    func query(_ sql: String) throws -> [String] {
        try runCommand("sqlite3", [statePath, sql]).split(separator: "\n").map(String.init)
    }

    deinit {
        kill()
    }
}
