import Foundation
import GeotifyJSON

/// The metrics in Prometheus' text exposition format (version 0.0.4), each family with
/// `# HELP` and `# TYPE` lines, named as Prometheus' conventions ask: prefixed
/// `geotify_`, snake case, counters ending in `_total`, times in seconds.
///
/// A counter `name` becomes `geotify_<name>_total`; a counter by kind `group.key`
/// becomes one family `geotify_<group>_total` with a label (`kind` for errors, `reason`
/// for dropped fixes and HTTP refusals, `code` for refused commands and HTTP statuses,
/// `key` otherwise). Pure: metrics in, text out.
package enum PrometheusText {
    /// The media type to serve it with.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Labels for the counter groups Geotify has.
    static let groupLabels = [
        "errors": "kind", "fixes_dropped": "reason", "commands_refused": "code",
        "http_responses": "code", "http_refused": "reason",
    ]

    /// Help text for the counters Geotify has; others get a generic line.
    static let help = [
        "messages_received": "MQTT messages received.",
        "fixes_evaluated": "Position fixes evaluated against fences.",
        "transitions": "Fence transitions (enter, exit, dwell) detected.",
        "notifications": "Notifications published.",
        "errors": "Inputs refused, by error kind.",
        "fixes_dropped": "Fixes dropped, by reason.",
        "commands_refused": "Fence commands refused, by error code.",
        "http_responses": "HTTP responses sent, by status code.",
        "http_refused": "HTTP requests refused, by reason.",
    ]

    /// The exposition text for `metrics` and the server's own gauges.
    package static func render(_ metrics: ConsoleMetrics, health: ConsoleHealth, connections: Int, subscribers: Int) -> String {
        var out = ""
        gauge(&out, "geotify_devices", "Devices with state.", Double(metrics.devices))
        gauge(&out, "geotify_fences", "Fences in force, own and shared.", Double(metrics.fences))
        gauge(&out, "geotify_uptime_seconds", "Seconds since the bridge started.", metrics.uptime)
        gauge(&out, "geotify_pending_messages", "Messages decided and not yet acknowledged by the broker.", Double(metrics.pending))
        gauge(&out, "geotify_http_connections", "Open HTTP connections.", Double(connections))
        gauge(&out, "geotify_http_event_subscribers", "Map pages following live updates.", Double(subscribers))
        out += "# HELP geotify_healthy Whether each thing the bridge needs is fine (1) or not (0).\n# TYPE geotify_healthy gauge\n"
        for check in health.checks {
            out += "geotify_healthy{check=\"\(escape(check.name))\"} \(check.ok ? 1 : 0)\n"
        }
        var families: [String: [(labels: String, value: Int)]] = [:]
        var origins: [String: String] = [:]
        for (name, value) in metrics.counters {
            let (group, key) = split(name)
            let family = "geotify_" + sanitize(group) + "_total"
            origins[family] = group
            let labels = key.map { "{\(groupLabels[group] ?? "key")=\"\(escape($0))\"}" } ?? ""
            families[family, default: []].append((labels, value))
        }
        for family in families.keys.sorted() {
            let group = origins[family] ?? family
            out += "# HELP \(family) \(help[group] ?? "Geotify counter \(group).")\n# TYPE \(family) counter\n"
            for sample in (families[family] ?? []).sorted(by: { $0.labels < $1.labels }) {
                out += "\(family)\(sample.labels) \(sample.value)\n"
            }
        }
        if let latency = metrics.latency {
            let name = "geotify_evaluation_latency_seconds"
            out += "# HELP \(name) Time from a message's arrival to the commit of its outcome.\n# TYPE \(name) histogram\n"
            var cumulative = 0
            for (bound, count) in zip(latency.upperBounds, latency.counts) {
                cumulative += count
                out += "\(name)_bucket{le=\"\(number(bound))\"} \(cumulative)\n"
            }
            out += "\(name)_bucket{le=\"+Inf\"} \(latency.count)\n"
            out += "\(name)_sum \(number(latency.sum))\n\(name)_count \(latency.count)\n"
        }
        return out
    }

    private static func gauge(_ out: inout String, _ name: String, _ help: String, _ value: Double) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(number(value))\n"
    }

    /// `group.key` split at the first dot; a plain name has no key.
    package static func split(_ name: String) -> (group: String, key: String?) {
        guard let dot = name.firstIndex(of: "."), dot != name.startIndex, name.index(after: dot) != name.endIndex else {
            return (name, nil)
        }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }

    /// A metric name part with every character Prometheus does not allow made `_`.
    package static func sanitize(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") ? $0 : "_" })
    }

    /// A label value with backslash, quote and line break escaped.
    package static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A sample value as Prometheus reads it.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return JSONWriter.text(of: value)
    }
}
