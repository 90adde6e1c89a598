import Foundation
import GeotifyBridge
import GeotifyJSON
import GeotifyMQTT
import Synchronization

/// `geotify status`: reads the running bridge's retained statistics and status from the
/// broker and prints them as a table, so an operator can see what the bridge is doing
/// without a dashboard.
enum StatusCommand {
    static let help = """
        usage: geotify status [options]

        Reads the bridge's retained statistics (<prefix>/stats) and status
        (<prefix>/status), or with a shard those of that instance
        (<prefix>/shard/<index>/...), from the broker and prints them as a table. Exits 0
        when statistics arrived, 1 when the broker cannot be reached (at once, with the
        reason: nothing listening, unknown host, TLS, login refused) or no statistics
        arrive in time.

        options:
        \(CommandOption.help(options))
        """

    static let options = SettingsOptions.options(["broker"]) + [
        CommandOption(name: "timeout", placeholder: "SECONDS", help: "how long to wait for the statistics (default: 5)"),
        CommandOption(name: "json", placeholder: nil, help: "print {\"status\": ..., \"stats\": ...} as JSON instead"),
        CommandOption(name: "online", placeholder: nil, help: "exit 1 unless the bridge's status is online too (a health check)"),
    ]

    static func run(_ words: [String]) throws(UsageError) -> Int32 {
        let arguments = try Arguments(words, command: "status", options: options)
        try arguments.expectNoPositionals()
        let settings = try SettingsOptions.settings(arguments, flags: ["broker"], command: "status").settings
        var timeout = 5.0
        if let text = arguments.value("timeout") {
            guard let value = Double(text), value.isFinite, value > 0, value <= 3600 else {
                throw UsageError("--timeout must be a number of seconds above 0 and at most 3600, not \"\(text)\"", command: "status")
            }
            timeout = value
        }
        let topics = Topics(prefix: settings.topicPrefix, shard: settings.shard)
        let observed: Observed
        switch observe(settings: settings, topics: topics, timeout: timeout) {
        case .success(let value):
            observed = value
        case .failure(let failure):
            Logger.standardError("geotify: \(failure.message)")
            return 1
        }
        let report: StatsReport
        do {
            report = try StatsReport(parsing: observed.stats)
        } catch {
            Logger.standardError("geotify: the statistics on \(StatsReport.topic(topics)) are not readable: \(error)")
            return 1
        }
        if arguments.isSet("online"), observed.status != "online" {
            Logger.standardError("geotify: the bridge's status on \(topics.status) is \(observed.status ?? "not set"), not online")
            return 1
        }
        if arguments.isSet("json") {
            let object: JSON = ["status": observed.status.map { .string($0) } ?? .null, "stats": report.json]
            print(JSONWriter(pretty: true).string(object), terminator: "")
        } else {
            print(table(report, status: observed.status, clientID: settings.shard?.clientID(settings.clientID) ?? settings.clientID), terminator: "")
        }
        return 0
    }

    /// The report as aligned sections: the bridge, warnings when a counter means the
    /// operator must act, then each counter group, then latency. Numbers are
    /// right-aligned within a section, the bridge's own lines left-aligned.
    /// `clientID` is the bridge's client id in the settings `geotify status` was given.
    static func table(_ report: StatsReport, status: String?, clientID: String) -> String {
        var bridge = [("bridge", status ?? "unknown"), ("as of", timestamp(report.time))]
        if let uptime = report.uptime { bridge.append(("uptime", duration(uptime))) }
        bridge += [("devices", String(report.devices)), ("fences", String(report.fences))]
        if let pending = report.pending { bridge.append(("pending", String(pending))) }
        var sections = [section(nil, bridge, rightAligned: false)]
        let warnings = warnings(report, clientID: clientID)
        if !warnings.isEmpty { sections.append(warnings.map { "warning: \($0)\n" }.joined()) }
        for (group, counters) in report.groupedCounters {
            let rows = counters.map { ($0.key.isEmpty ? "(total)" : $0.key, String($0.value)) }
            sections.append(section(group ?? "counters", rows, rightAligned: true))
        }
        var latency = [("samples", String(report.latency?.count ?? 0))]
        if let summary = report.latency {
            latency += [("p50", summary.p50), ("p90", summary.p90), ("p99", summary.p99), ("max", summary.maximum)]
                .map { ($0.0, JSONWriter.text(of: ($0.1 * 1_000_000).rounded() / 1000)) }
        }
        sections.append(section("latency (ms)", latency, rightAligned: true))
        return sections.joined(separator: "\n")
    }

    /// What the counters say the operator must act on, one sentence each: the bridge's
    /// session taken over (`errors.session_taken_over`), which the counters alone leave
    /// unexplained among the other errors.
    static func warnings(_ report: StatsReport, clientID: String) -> [String] {
        let takeovers = report.counters[Counter.errors(.sessionTakenOver).name] ?? 0
        guard takeovers > 0 else { return [] }
        let times = takeovers == 1 ? "once" : "\(takeovers) times"
        return ["session taken over \(times): another client connects with client id \"\(clientID)\" and the broker throws the bridge off;"
            + " give each bridge its own clientId and let the broker tie client ids to logins (use_username_as_clientid, docs/security.md)"]
    }

    /// One block of the table: an optional title, then `label  value` lines (indented
    /// under a title), labels padded to the longest.
    private static func section(_ title: String?, _ rows: [(String, String)], rightAligned: Bool) -> String {
        let indent = title == nil ? "" : "  "
        let labelWidth = rows.map(\.0.count).max() ?? 0
        let valueWidth = rows.map(\.1.count).max() ?? 0
        let lines = rows.map { label, value in
            let padding = rightAligned ? String(repeating: " ", count: valueWidth - value.count) : ""
            return indent + label.padding(toLength: labelWidth + 2, withPad: " ", startingAt: 0) + padding + value
        }
        return ((title.map { [$0] } ?? []) + lines).joined(separator: "\n") + "\n"
    }

    /// What the broker had: the statistics payload and the bridge's status, if any.
    private struct Observed {
        var stats: [UInt8]
        var status: String?
    }

    /// Why nothing usable was observed.
    private struct Failure: Error {
        var message: String
    }

    /// What the client's network thread reports, read by the waiting thread.
    private final class Inbox: Sendable {
        struct Seen {
            var connected = false
            /// The first failure before any connection.
            var failure: ConnectionFailure?
            var status: String?
            var stats: [UInt8]?
            /// The size of a statistics message larger than the bridge takes, not read.
            var statsTooLarge: Int?
            /// The SUBACK code of each subscription the broker refused, by message id.
            var refused: [Int32: Int] = [:]
        }

        let seen = Mutex(Seen())
    }

    /// Connects with a clean session and a random client id, subscribes to the status and
    /// statistics topics and waits, at most `timeout` seconds, for the retained statistics.
    private static func observe(settings: Settings, topics: Topics, timeout: Double) -> Result<Observed, Failure> {
        let statsTopic = StatsReport.topic(topics)
        let statusTopic = topics.status
        let inbox = Inbox()
        var options = MQTTOptions(
            clientID: "geotify-status-\(UUID().uuidString.prefix(8).lowercased())",
            host: settings.broker.host, port: settings.broker.port)
        options.cleanSession = true
        options.keepAlive = settings.keepAlive
        options.reconnectDelayMax = 1
        // What the bridge publishes fits; something larger on the topic (a probe runs this
        // in the bridge's container every minute) is not taken whole.
        options.maximumIncomingPacketBytes = settings.largestIncomingPacketBytes
        do {
            for warning in try settings.security.configure(&options, broker: settings.broker) { Logger.standardError("warning: \(warning)") }
        } catch {
            return .failure(Failure(message: error.message))
        }
        let client: MQTTClient
        do {
            client = try MQTTClient(options: options) { event in
                inbox.seen.withLock { seen in
                    switch event {
                    case .connected:
                        seen.connected = true
                    case .connectionRefused, .disconnected:
                        if !seen.connected, seen.failure == nil {
                            seen.failure = ConnectionFailure(event, broker: settings.broker.description)
                        }
                    case .message(let message) where message.topic == statusTopic:
                        seen.status = message.payload.isEmpty ? nil : String(decoding: message.payload, as: UTF8.self)
                    case .message(let message) where message.topic == statsTopic && message.payloadLeftOut > 0:
                        seen.statsTooLarge = message.payload.count + message.payloadLeftOut
                    case .message(let message) where message.topic == statsTopic && !message.payload.isEmpty:
                        seen.stats = message.payload
                    case .subscribed(let messageID, let granted):
                        if let code = granted.first(where: { $0 >= 128 }) { seen.refused[messageID] = code }
                    default:
                        break
                    }
                }
            }
            try client.start()
        } catch {
            return .failure(Failure(message: "cannot connect to \(settings.broker): \(error)"))
        }
        defer { client.stop() }
        // The status is subscribed first: the broker sends each subscription's retained
        // message in order, so once the statistics are here, a retained status is too.
        let deadline = Date().addingTimeInterval(timeout)
        // The filter of each SUBSCRIBE, by its message id.
        var subscriptions: [Int32: String] = [:]
        while Date() < deadline {
            let seen = inbox.seen.withLock { $0 }
            if let stats = seen.stats {
                return .success(Observed(stats: stats, status: seen.status))
            }
            if let size = seen.statsTooLarge {
                return .failure(Failure(
                    message: "the statistics on \(statsTopic) are \(size) bytes, more than the bridge takes (\(settings.largestIncomingPacketBytes)), so they were not read; another client wrote them there"))
            }
            if let failure = seen.failure {
                return .failure(Failure(message: failure.description))
            }
            // A refused subscription would only be seen as no statistics after the timeout.
            if let (filter, code) = seen.refused.lazy.compactMap({ id, code in subscriptions[id].map { ($0, code) } }).first {
                return .failure(Failure(message: Bridge.subscriptionRefused(filter: filter, code: code, version: options.protocolVersion)))
            }
            if seen.connected && subscriptions.isEmpty {
                do {
                    subscriptions[try client.subscribe(statusTopic, qos: 1)] = statusTopic
                    subscriptions[try client.subscribe(statsTopic, qos: 1)] = statsTopic
                } catch {
                    return .failure(Failure(message: "cannot subscribe at \(settings.broker): \(error)"))
                }
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let seen = inbox.seen.withLock { $0 }
        let waited = JSONWriter.text(of: timeout)
        if let failure = seen.failure {
            return .failure(Failure(message: failure.description))
        }
        guard seen.connected else {
            return .failure(Failure(message: "cannot reach the broker at \(settings.broker) (no connection within \(waited) s)"))
        }
        let status = seen.status.map { " (the bridge's status is \($0))" } ?? " (no bridge status either)"
        return .failure(Failure(message: "no statistics on \(statsTopic) within \(waited) s\(status); is the bridge running with statistics on?"))
    }

    /// `tst` as an ISO 8601 UTC time.
    private static func timestamp(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: seconds.rounded(.down)))
    }

    /// Seconds as `1d 2h 3m 4s`, leading zero units left out.
    private static func duration(_ seconds: Double) -> String {
        var remaining = Int(max(0, min(seconds, 1e12)))
        var parts: [String] = []
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] where remaining >= size || !parts.isEmpty {
            parts.append("\(remaining / size)\(unit)")
            remaining %= size
        }
        parts.append("\(remaining)s")
        return parts.joined(separator: " ")
    }
}
