import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A mosquitto broker process for one test, so integration tests never depend on a
/// broker the machine may or may not run: it listens on a free 127.0.0.1 port, keeps its
/// config, log and persistence in its own temporary directory, and is stopped (and the
/// directory removed) when the value is released.
///
/// Thread safety: `port`, `directory` and the file URLs never change; the process is
/// behind a mutex, so `stop()`, `restart()` and `deinit` may race without harm.
package final class TestBroker: @unchecked Sendable {
    /// The TCP port the broker listens on, on 127.0.0.1.
    package let port: Int
    /// The broker's own temporary directory (config, log, persistence database).
    package let directory: URL
    /// The broker's URL, as `BrokerAddress(parsing:)` and the CLI take it.
    package var url: String { "mqtt://127.0.0.1:\(port)" }

    private let configFile: URL
    private let logFile: URL
    private let outputFile: URL
    private let process: Mutex<ChildProcess?>

    /// Writes a mosquitto.conf (a listener on 127.0.0.1:`port`, anonymous access,
    /// persistence in the directory when `persistence` is true, a log file, then
    /// `extraConfig`, whose options apply to that listener) and starts the broker,
    /// waiting up to 10 s until it accepts TCP connections. Without `port` a free one is
    /// chosen, and another is tried if something takes it first. Throws with the
    /// broker's log if it does not come up.
    package init(persistence: Bool = false, extraConfig: String = "", port: Int? = nil) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("geotify-broker-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configFile = directory.appendingPathComponent("mosquitto.conf")
        logFile = directory.appendingPathComponent("mosquitto.log")
        outputFile = directory.appendingPathComponent("mosquitto.out")
        let start = { [directory, configFile, logFile, outputFile] (port: Int) throws -> ChildProcess in
            try Self.config(
                port: port, directory: directory, logFile: logFile, persistence: persistence, extra: extraConfig
            ).write(to: configFile, atomically: true, encoding: .utf8)
            return try Self.launch(config: configFile, output: outputFile, port: port, logFile: logFile)
        }
        let started: ChildProcess
        do {
            if let port {
                started = try start(port)
                self.port = port
            } else {
                let (launched, ports) = try withFreePorts(1) { try start($0[0]) }
                started = launched
                self.port = ports[0]
            }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        process = Mutex(started)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the broker: SIGTERM (so a persistent broker saves its database), then
    /// waits up to 10 s for it to exit, then SIGKILL. Does nothing if it is not running.
    package func stop() {
        end(with: SIGTERM)
    }

    /// Stops the running broker with `signal` (`ChildProcess.stop`: again until it exits,
    /// SIGKILL after 10 s); forgets the process either way.
    private func end(with signal: Int32) {
        process.withLock { process in
            process?.stop(signal: signal)
            process = nil
        }
    }

    /// Stops the broker in its tracks (SIGSTOP): it holds its connections open and reads
    /// nothing, as a broker stalled by its machine would, so what its clients write stays
    /// in their sockets. `kill()` ends it (`stop()` would wait for a SIGTERM it cannot
    /// handle while stopped).
    package func pause() {
        process.withLock { $0?.terminate(signal: SIGSTOP) }
    }

    /// Lets a broker that `pause()` stopped run again (SIGCONT): it reads what its
    /// clients wrote meanwhile, in order, and notices the connections closed meanwhile.
    package func resume() {
        process.withLock { $0?.terminate(signal: SIGCONT) }
    }

    /// Ends the broker at once (SIGKILL, also when paused), as a crash would: its
    /// clients' connections drop, and it saves nothing. `restart()` starts it again.
    package func kill() {
        end(with: SIGKILL)
    }

    /// Stops the broker and starts it again on the same port with the same config, so a
    /// persistent broker comes back with its sessions and queued messages.
    package func restart() throws {
        stop()
        let started = try Self.launch(config: configFile, output: outputFile, port: port, logFile: logFile)
        process.withLock { $0 = started }
    }

    /// How many connections the broker refused for want of valid credentials, by its log.
    package var refusedLogins: Int {
        log.components(separatedBy: "disconnected, not authorised").count - 1
    }

    /// Everything the broker logged so far (its log file, then its standard output and
    /// error, where mosquitto reports problems found before it opens the log).
    package var log: String {
        Self.read(logFile) + Self.read(outputFile)
    }

    private static func config(
        port: Int, directory: URL, logFile: URL, persistence: Bool, extra: String
    ) -> String {
        var lines = [
            "set_tcp_nodelay true",
            "listener \(port) 127.0.0.1",
            "allow_anonymous true",
            "log_dest file \(logFile.path)",
            "log_type all",
        ]
        if getuid() == 0 {
            // Run as root, mosquitto would switch to the "mosquitto" user, which cannot
            // write in this directory.
            lines.append("user root")
        }
        if persistence {
            lines.append("persistence true")
            lines.append("persistence_location \(directory.path)/")
            lines.append("autosave_interval 1")
        } else {
            lines.append("persistence false")
        }
        lines.append(extra)
        return lines.joined(separator: "\n") + "\n"
    }

    private static func launch(config: URL, output: URL, port: Int, logFile: URL) throws -> ChildProcess {
        let logged = read(logFile).utf8.count
        let process = try ChildProcess(
            executable: mosquittoExecutable() ?? "mosquitto", arguments: ["-c", config.path], outputFile: output
        )
        // Listening is not enough: another process might hold the port while this broker
        // fails to bind it. mosquitto logs "running" once its own listeners are open.
        let ready = waitUntil(timeout: 10) {
            guard process.isRunning else { return true }
            let fresh = String(decoding: read(logFile).utf8.dropFirst(logged), as: UTF8.self)
            return fresh.contains(" running") && acceptsConnections(port: port)
        }
        guard ready, process.isRunning else {
            process.terminate(signal: SIGKILL)
            _ = process.waitForExit(timeout: 5)
            throw TestSupportError(
                "mosquitto did not start listening on 127.0.0.1:\(port):\n\(read(logFile))\(read(output))"
            )
        }
        return process
    }

    private static func read(_ file: URL) -> String {
        (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    }
}
