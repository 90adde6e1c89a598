import GeotifyConsole
import Testing

@Suite struct PrometheusTextTests {
    @Test func countersBecomeTotalsAndGroupsBecomeLabels() {
        let metrics = ConsoleMetrics(
            counters: ["messages_received": 10, "errors.invalid_json": 2, "errors.out_of_range": 1, "http_refused.payload_too_large": 3, "odd-name.k\"ey": 1],
            devices: 2, fences: 3, uptime: 60.5, pending: 7)
        let text = PrometheusText.render(metrics, health: ConsoleHealth(checks: [.init(name: "broker", ok: false, detail: "down")]), connections: 4, subscribers: 1)
        #expect(text.contains("# HELP geotify_messages_received_total MQTT messages received.\n# TYPE geotify_messages_received_total counter\ngeotify_messages_received_total 10\n"))
        #expect(text.contains("# TYPE geotify_errors_total counter\ngeotify_errors_total{kind=\"invalid_json\"} 2\ngeotify_errors_total{kind=\"out_of_range\"} 1\n"))
        #expect(text.contains("geotify_http_refused_total{reason=\"payload_too_large\"} 3\n"))
        #expect(text.contains("geotify_odd_name_total{key=\"k\\\"ey\"} 1\n"))
        #expect(text.contains("geotify_uptime_seconds 60.5\n"))
        #expect(text.contains("# TYPE geotify_pending_messages gauge\ngeotify_pending_messages 7\n"))
        #expect(text.contains("geotify_healthy{check=\"broker\"} 0\n"))
        #expect(text.contains("geotify_http_connections 4\n"))
    }

    /// A counter's name is split at its first dot into a family and a label only when
    /// both sides hold something; a family's name keeps ASCII letters, digits and `_`
    /// (anything else, `é` too, is `_`, as the exposition format asks); a label's value
    /// has its backslashes, quotes and line breaks escaped, so no counter can start a
    /// line of its own.
    @Test func namesAndLabelsKeepToTheExpositionFormat() {
        #expect(PrometheusText.split("errors.invalid_json") == ("errors", "invalid_json"))
        #expect(PrometheusText.split("a.b.c") == ("a", "b.c"))
        #expect(PrometheusText.split("errors.") == ("errors.", nil) && PrometheusText.split(".x") == (".x", nil))
        #expect(PrometheusText.sanitize("caf\u{E9}-2_x") == "caf__2_x")
        #expect(PrometheusText.escape("a\\b\"c\nd") == #"a\\b\"c\nd"#)
    }

    @Test func latencyIsACumulativeHistogram() {
        let metrics = ConsoleMetrics(
            counters: [:], devices: 0, fences: 0, uptime: 0,
            latency: ConsoleMetrics.Latency(upperBounds: [0.001, 0.01], counts: [2, 3], count: 6, sum: 0.5))
        let text = PrometheusText.render(metrics, health: ConsoleHealth(checks: []), connections: 0, subscribers: 0)
        #expect(text.contains("geotify_evaluation_latency_seconds_bucket{le=\"0.001\"} 2\ngeotify_evaluation_latency_seconds_bucket{le=\"0.01\"} 5\ngeotify_evaluation_latency_seconds_bucket{le=\"+Inf\"} 6\ngeotify_evaluation_latency_seconds_sum 0.5\ngeotify_evaluation_latency_seconds_count 6\n"))
    }
}
