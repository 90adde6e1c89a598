import Foundation
import GeotifyTestSupport

/// A mosquitto broker the harness starts for itself: a listener on a free 127.0.0.1
/// port, a temporary directory for its config and log, no persistence, and per-client
/// queues large enough that a backlog shows up as latency and lag (which the bench
/// measures) rather than as messages the broker silently drops. Its log records each
/// subscription, so the bench can wait for a subscriber it does not control.
final class BrokerProcess {
    let port: Int
    let directory: URL
    /// A second listener, TLS, when asked for: its port and the CA file its clients trust.
    let tls: (port: Int, caFile: String)?
    private let process: MeasuredProcess

    /// Starts mosquitto with per-client queues of `maximumQueued` messages (0: no limit),
    /// Nagle's algorithm off on its sockets when `noDelay` (`set_tcp_nodelay`; mosquitto
    /// leaves it on by default), a second listener over TLS when `tls` (a throwaway CA's
    /// certificate for 127.0.0.1), and waits (up to 10 s) until it accepts connections.
    init(maximumQueued: Int = 1_000_000, noDelay: Bool = false, tls: Bool = false) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("geotify-bench-broker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try LocalPort.free()
        var tlsLines: [String] = []
        if tls {
            let certificates = try TestCertificates(in: directory.appendingPathComponent("tls"))
            let tlsPort = try LocalPort.free()
            self.tls = (tlsPort, certificates.caFile)
            tlsLines = ["listener \(tlsPort) 127.0.0.1"] + certificates.brokerConfig.split(separator: "\n").map(String.init)
        } else {
            self.tls = nil
        }
        var lines = [
            "listener \(port) 127.0.0.1",
            "allow_anonymous true",
            "persistence false",
            "max_queued_messages \(maximumQueued)",
            "log_dest file \(directory.appendingPathComponent("mosquitto.log").path)",
        ] + ["error", "warning", "notice", "information", "subscribe"].map { "log_type \($0)" }
            + (noDelay ? ["set_tcp_nodelay true"] : []) + tlsLines
        if getuid() == 0 { lines.append("user root") }
        let config = directory.appendingPathComponent("mosquitto.conf")
        try (lines.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
        process = try MeasuredProcess(
            BrokerProcess.executable("mosquitto", in: ["/usr/sbin", "/usr/bin", "/usr/local/sbin"]), ["-c", config.path])
        let process = process
        let ports = [port] + (self.tls.map { [$0.port] } ?? [])
        guard BenchClock.wait(timeout: 10, until: { ports.allSatisfy(LocalPort.acceptsConnections) || process.exit != nil }),
              process.exit == nil else {
            stop()
            throw BenchError("mosquitto did not start on 127.0.0.1:\(port); see \(directory.path)")
        }
    }

    /// The broker's process id.
    var pid: pid_t { process.pid }

    /// Whether the client `clientID` has subscribed to `filter` (mosquitto logs
    /// `<client> <qos> <filter>` once the subscription is in place).
    func hasSubscription(client clientID: String, filter: String) -> Bool {
        guard let log = try? String(contentsOf: directory.appendingPathComponent("mosquitto.log"), encoding: .utf8) else { return false }
        return log.split(separator: "\n").contains { line in
            line.hasSuffix(" \(filter)") && line.contains(": \(clientID) ")
        }
    }

    /// Stops the broker and removes its directory.
    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The path of `name` in the first of `directories` that has it, else on PATH.
    static func executable(_ name: String, in directories: [String] = []) -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for directory in directories + path {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return name
    }
}
