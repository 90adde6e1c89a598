import Testing
import GeotifyBridge
import GeotifyJSON
import GeotifyStore

@Suite("Statistics report")
struct StatsReportTests {
    static let counters = [
        "messages_received": 10, "fixes_evaluated": 8, "transitions": 2, "notifications": 2,
        "errors.invalid_json": 1, "errors.state_write": 3, "fixes_dropped.out_of_order": 1,
    ]

    static let report = StatsReport(
        time: 1_700_000_000, uptime: 3_600, devices: 2, fences: 3, pending: 4, counters: counters,
        latency: LatencyHistogram.Summary(count: 8, p50: 0.000_119, p90: 0.0005, p99: 0.001_19, maximum: 0.0013))

    func text(_ report: StatsReport) -> String {
        JSONWriter().string(report.json)
    }

    @Test func theDocument() {
        #expect(text(Self.report) == #"{"tst":1700000000,"uptime":3600,"devices":2,"fences":3,"pending":4,"counters":{"fixes_evaluated":8,"messages_received":10,"notifications":2,"transitions":2,"errors":{"invalid_json":1,"state_write":3},"fixes_dropped":{"out_of_order":1}},"latency_ms":{"count":8,"p50":0.119,"p90":0.5,"p99":1.19,"max":1.3}}"#)
    }

    @Test func theMessageIsRetainedOnTheStatsTopic() {
        let message = Self.report.message(topics: Topics(prefix: "geo"))
        #expect(message.topic == "geo/stats")
        #expect(StatsReport.topic(Topics()) == "geotify/stats")
        #expect(message.retain)
        #expect(message.qos == 0)
        #expect(message.payload == JSONWriter().bytes(Self.report.json))
    }

    @Test func withoutUptimeOrLatency() {
        let report = StatsReport(time: 5, devices: 0, fences: 0, counters: [:])
        #expect(text(report) == #"{"tst":5,"devices":0,"fences":0,"counters":{},"latency_ms":{"count":0}}"#)
    }

    @Test func itReadsBackWhatItWrites() throws {
        let parsed = try StatsReport(parsing: JSONWriter().bytes(Self.report.json))
        #expect(parsed.time == Self.report.time)
        #expect(parsed.uptime == 3_600)
        #expect(parsed.devices == 2 && parsed.fences == 3)
        #expect(parsed.pending == 4)
        #expect(parsed.counters == Self.counters)
        let latency = try #require(parsed.latency)
        #expect(latency.count == 8)
        #expect(abs(latency.p50 - 0.000_119) < 1e-12)
        #expect(abs(latency.maximum - 0.0013) < 1e-12)
        let bare = try StatsReport(parsing: Array(#"{"tst":5,"devices":0,"fences":0,"counters":{}}"#.utf8))
        #expect(bare == StatsReport(time: 5, devices: 0, fences: 0, counters: [:]), "a report of an earlier version has no pending count")
        #expect(throws: InputError(.outOfRange, "\"pending\" must be a whole number of at least 0, not -1")) {
            _ = try StatsReport(parsing: Array(#"{"tst":5,"devices":0,"fences":0,"pending":-1,"counters":{}}"#.utf8))
        }
    }

    @Test func countersAreGroupedByTheirFirstDot() {
        let report = StatsReport(time: 0, devices: 0, fences: 0, counters: ["b": 1, "a.x.y": 2, "a": 3, ".odd": 4, "end.": 5])
        let groups = report.groupedCounters
        #expect(groups.map(\.group) == [nil, "a"])
        #expect(groups[0].counters.map(\.key) == [".odd", "b", "end."])
        #expect(groups[1].counters.map(\.key) == ["", "x.y"])
        #expect(text(report).contains(#""counters":{".odd":4,"b":1,"end.":5,"a":{"":3,"x.y":2}}"#))
        #expect((try? StatsReport(parsing: JSONWriter().bytes(report.json)))?.counters == report.counters)
    }

    @Test func badDocumentsGetSpecificErrors() {
        func refusal(_ text: String) -> InputError? {
            do {
                _ = try StatsReport(parsing: Array(text.utf8))
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal("")?.code == .emptyPayload)
        #expect(refusal("{")?.code == .invalidJSON)
        #expect(refusal("[]")?.code == .notAnObject)
        #expect(refusal(#"{"devices":0,"fences":0,"counters":{}}"#) == InputError(.missingField, "missing \"tst\""))
        #expect(refusal(#"{"tst":"x","devices":0,"fences":0,"counters":{}}"#)?.code == .wrongType)
        #expect(refusal(#"{"tst":1,"devices":-1,"fences":0,"counters":{}}"#)?.code == .outOfRange)
        #expect(refusal(#"{"tst":1,"devices":0,"fences":0,"counters":[]}"#)?.code == .wrongType)
        #expect(refusal(#"{"tst":1,"devices":0,"fences":0,"counters":{"a":{"b":"c"}}}"#) ==
            InputError(.wrongType, "\"counters.a.b\" must be a number, not a string"))
        #expect(refusal(#"{"tst":1,"devices":0,"fences":0,"counters":{},"latency_ms":{"count":2}}"#) ==
            InputError(.missingField, "missing \"latency_ms.p50\""))
    }

    /// A count is a whole number: 1.5 devices is refused, not read as 1.
    @Test func aCountWithAFractionIsRefused() {
        #expect(throws: InputError(.outOfRange, "\"devices\" must be a whole number of at least 0, not 1.5")) {
            _ = try StatsReport(parsing: Array(#"{"tst":5,"devices":1.5,"fences":0,"counters":{}}"#.utf8))
        }
        #expect(throws: InputError(.outOfRange, "\"counters.errors.invalid_json\" must be a whole number of at least 0, not 0.5")) {
            _ = try StatsReport(parsing: Array(#"{"tst":5,"devices":1,"fences":0,"counters":{"errors":{"invalid_json":0.5}}}"#.utf8))
        }
    }
}
