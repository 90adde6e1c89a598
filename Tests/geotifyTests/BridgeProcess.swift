import Foundation
import GeotifyStore
import GeotifyTestSupport

/// A `geotify run` process with its own settings file, state directory and topic prefix,
/// so a test can run several bridges on one broker, kill one and start it again.
final class BridgeProcess {
    let name: String
    let directory: URL
    let settingsURL: URL
    private(set) var child: ChildProcess?

    /// Writes the settings (broker on `port`, over TLS with `tls`, client id `name`, topic
    /// prefix `prefix` (`name` by default), the fence file or directory `fences`, and the
    /// members `extra`, such as `"notify": {...}`) into `directory`.
    init(name: String, port: Int, tls: Bool = false, fences: URL, directory: URL, prefix: String? = nil, extra: String? = nil) throws {
        self.name = name
        self.directory = directory
        self.port = port
        scheme = tls ? "mqtts" : "mqtt"
        settingsURL = directory.appendingPathComponent("\(name).json")
        rest = """
            "clientId": "\(name)", "topicPrefix": "\(prefix ?? name)",
             "fences": "\(fences.path)", "stateDir": "state-\(name)", "lanes": 2, "logLevel": "info"
            """
        try writeSettings(extra: extra)
    }

    /// The broker's port on 127.0.0.1, as the next `writeSettings` writes it.
    var port: Int
    /// The settings every bridge of a test gets, beside the broker.
    private let rest: String
    /// The broker URL's scheme: `mqtts` for TLS.
    private let scheme: String

    /// Writes the settings file again with the members `extra`; the next `start()` reads it.
    func writeSettings(extra: String?) throws {
        let settings = #""broker": "\#(scheme)://127.0.0.1:\#(port)", "# + rest + (extra.map { ",\n \($0)" } ?? "")
        try "{\(settings)}".write(to: settingsURL, atomically: true, encoding: .utf8)
    }

    /// How many messages its outbox holds past the handed-over mark: decided, committed
    /// and never handed to the broker.
    func pendingOutboxMessages() throws -> Int64 {
        max(0, try newestOutboxMessage() - outboxMarks().handed)
    }

    var stateDirectory: String { directory.appendingPathComponent("state-\(name)").path }

    var statePath: String { directory.appendingPathComponent("state-\(name)/state.sqlite").path }
    var logURL: URL { directory.appendingPathComponent("\(name).log") }

    /// Starts `geotify run`, with `environment` instead of the test process's when given.
    func start(environment: [String: String]? = nil) throws {
        child = try ChildProcess(
            executable: geotifyExecutable.path, arguments: ["run", "--config", settingsURL.path], environment: environment, outputFile: logURL)
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

    /// The id of the newest message in its outbox; 0 when it is empty (pruning deletes
    /// only messages the broker acknowledged, so those are all handed over).
    func newestOutboxMessage() throws -> Int64 {
        try query("SELECT coalesce(max(first + count - 1), 0) FROM outbox_batch").first.flatMap { Int64($0) } ?? 0
    }

    /// The messages in its outbox with ids past `first` and up to `last`, read with the
    /// sqlite3 shell (the database of a killed process, as it left it).
    func outboxMessages(after first: Int64, through last: Int64) throws -> [OutboxMessage] {
        try query("SELECT first, count, hex(messages) FROM outbox_batch ORDER BY first").flatMap { row -> [OutboxMessage] in
            let parts = row.split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 3, let start = Int64(parts[0]), let count = Int(parts[1]) else { throw TestSupportError("an outbox row: \(row)") }
            // sqlite3's hex(): two upper-case digits a byte.
            func digit(_ character: UInt8) throws -> UInt8 {
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
                case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
                default: throw TestSupportError("a hex digit: \(character)")
                }
            }
            let hex = Array(parts[2].utf8)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(hex.count / 2)
            for position in stride(from: 0, to: hex.count - 1, by: 2) {
                bytes.append(try digit(hex[position]) << 4 | digit(hex[position + 1]))
            }
            return try OutboxBatch.decode(bytes, count: count).enumerated().filter { first < start + Int64($0.offset) && start + Int64($0.offset) <= last }.map(\.element)
        }
    }

    /// Runs an SQL query on the state database with the sqlite3 shell; one line a row.
    func query(_ sql: String) throws -> [String] {
        try runCommand("sqlite3", [statePath, sql]).split(separator: "\n").map(String.init)
    }

    deinit {
        kill()
    }
}
