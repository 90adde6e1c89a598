import GeotifyJSON
import GeotifyStore

/// The bridge's statistics as published, retained, on `geotify/stats` every few seconds,
/// and read back by `geotify status`:
///
/// ```json
/// {"tst":1700000000,"uptime":3600,"devices":2,"fences":3,"pending":0,
///  "counters":{"fixes_evaluated":8,"messages_received":10,"notifications":2,"transitions":2,
///              "errors":{"invalid_json":1},"fixes_dropped":{"out_of_order":1}},
///  "latency_ms":{"count":8,"p50":0.119,"p90":0.5,"p99":1.19,"max":1.3}}
/// ```
///
/// - `tst`: when the report was made, seconds since 1970; `uptime`: seconds since the
///   bridge started (absent when unknown).
/// - `devices`: the devices the bridge keeps state for, in all its lanes; `fences`: the
///   fence book's fences, own and shared.
/// - `pending`: messages decided and not yet acknowledged by the broker (waiting, in
///   flight, or left in the outbox by a spill): 0 once the bridge has caught up; a
///   number that keeps growing says the broker link is slower than what the bridge
///   publishes. Absent from reports of versions before it.
/// - `counters`: the `Counters` snapshot. A name `group.key` (`errors.invalid_json`,
///   `fixes_dropped.out_of_order`) is nested as `"group":{"key":n}`, so errors by kind
///   and dropped fixes by reason read as one object each; other names are plain
///   members. (Should a plain name equal a group's name, it is kept in that group under
///   the key `""`.)
/// - `latency_ms`: evaluation latency in milliseconds, to the microsecond: how many were
///   measured, the median, 90th and 99th percentiles and the maximum; only `count`
///   when none was.
package struct StatsReport: Sendable, Equatable {
    /// When the report was made, in seconds since 1970.
    package var time: Double
    /// Seconds since the bridge started, when known.
    package var uptime: Double?
    /// How many devices the bridge keeps state for, in all its lanes.
    package var devices: Int
    /// How many fences the fence book has, own and shared.
    package var fences: Int
    /// Messages decided and not yet acknowledged by the broker, when known.
    package var pending: Int?
    /// The counters by name, as `Counters.snapshot` has them.
    package var counters: [String: Int]
    /// The evaluation latency, in seconds; nil when nothing was measured.
    package var latency: LatencyHistogram.Summary?

    package init(
        time: Double, uptime: Double? = nil, devices: Int, fences: Int, pending: Int? = nil,
        counters: [String: Int], latency: LatencyHistogram.Summary? = nil
    ) {
        self.time = time
        self.uptime = uptime
        self.devices = devices
        self.fences = fences
        self.pending = pending
        self.counters = counters
        self.latency = latency
    }

    /// Where the report is published: `geotify/stats`.
    package static func topic(_ topics: Topics) -> String { topics.stats }

    /// The report as a retained QoS 0 message on `geotify/stats`: the next report
    /// replaces a lost one, so it is neither acknowledged nor kept in the outbox.
    package func message(topics: Topics) -> OutboxMessage {
        OutboxMessage(topic: StatsReport.topic(topics), payload: JSONWriter().bytes(json), qos: 0, retain: true)
    }

    /// The counters grouped as the document nests them: first the plain ones (group nil),
    /// then each group; names sorted within each.
    package var groupedCounters: [(group: String?, counters: [(key: String, value: Int)])] {
        var plain: [(key: String, value: Int)] = []
        var groups: [String: [(key: String, value: Int)]] = [:]
        for (name, value) in counters {
            if let (group, key) = StatsReport.split(name) {
                groups[group, default: []].append((key, value))
            } else {
                plain.append((name, value))
            }
        }
        for index in plain.indices.reversed() where groups[plain[index].key] != nil {
            groups[plain[index].key]?.append(("", plain[index].value))
            plain.remove(at: index)
        }
        let sortedPlain = plain.sorted { $0.key < $1.key }
        let sortedGroups = groups.sorted { $0.key < $1.key }.map { group in
            (group: Optional(group.key), counters: group.value.sorted { $0.key < $1.key })
        }
        return (sortedPlain.isEmpty ? [] : [(group: nil, counters: sortedPlain)]) + sortedGroups
    }

    /// The report as the JSON document above.
    package var json: JSON {
        var object = JSONObject()
        object["tst"] = .number(time)
        if let uptime { object["uptime"] = .number(uptime) }
        object["devices"] = .number(Double(devices))
        object["fences"] = .number(Double(fences))
        if let pending { object["pending"] = .number(Double(pending)) }
        var counterObject = JSONObject()
        for (group, members) in groupedCounters {
            let values = members.map { JSONObject.Member(key: $0.key, value: .number(Double($0.value))) }
            if let group {
                counterObject[group] = .object(JSONObject(values))
            } else {
                counterObject.members += values
            }
        }
        object["counters"] = .object(counterObject)
        var latencyObject = JSONObject()
        latencyObject["count"] = .number(Double(latency?.count ?? 0))
        if let latency {
            latencyObject["p50"] = .number(StatsReport.milliseconds(latency.p50))
            latencyObject["p90"] = .number(StatsReport.milliseconds(latency.p90))
            latencyObject["p99"] = .number(StatsReport.milliseconds(latency.p99))
            latencyObject["max"] = .number(StatsReport.milliseconds(latency.maximum))
        }
        object["latency_ms"] = .object(latencyObject)
        return .object(object)
    }

    /// Reads a report back from its payload; anything that is not such a document gets a
    /// specific error naming the member that is wrong.
    package init(parsing payload: [UInt8]) throws(InputError) {
        guard !payload.isEmpty else { throw InputError(.emptyPayload, "the statistics document is empty") }
        let json: JSON
        do {
            json = try JSONParser(maxDepth: 8).parse(payload)
        } catch {
            throw InputError(.invalidJSON, "the statistics document is not JSON: \(error)")
        }
        guard case .object(let object) = json else {
            throw InputError(.notAnObject, "the statistics document must be a JSON object, not \(json.kindDescription)")
        }
        time = try StatsReport.number(object, "tst")
        uptime = object["uptime"] == nil ? nil : try StatsReport.number(object, "uptime")
        devices = try StatsReport.count(object, "devices")
        fences = try StatsReport.count(object, "fences")
        pending = object["pending"] == nil ? nil : try StatsReport.count(object, "pending")
        guard let counterValue = object["counters"] else { throw InputError(.missingField, "missing \"counters\"") }
        guard case .object(let counterObject) = counterValue else {
            throw InputError(.wrongType, "\"counters\" must be an object, not \(counterValue.kindDescription)")
        }
        var counters: [String: Int] = [:]
        for member in counterObject.members {
            if case .object(let group) = member.value {
                for inner in group.members {
                    let name = inner.key.isEmpty ? member.key : "\(member.key).\(inner.key)"
                    counters[name] = try StatsReport.count(group, inner.key, path: "counters.\(member.key).")
                }
            } else {
                counters[member.key] = try StatsReport.count(counterObject, member.key, path: "counters.")
            }
        }
        self.counters = counters
        latency = nil
        if let latencyValue = object["latency_ms"] {
            guard case .object(let latencyObject) = latencyValue else {
                throw InputError(.wrongType, "\"latency_ms\" must be an object, not \(latencyValue.kindDescription)")
            }
            let count = try StatsReport.count(latencyObject, "count", path: "latency_ms.")
            if count > 0 {
                func seconds(_ key: String) throws(InputError) -> Double {
                    try StatsReport.number(latencyObject, key, path: "latency_ms.") / 1000
                }
                latency = LatencyHistogram.Summary(
                    count: count, p50: try seconds("p50"), p90: try seconds("p90"), p99: try seconds("p99"),
                    maximum: try seconds("max"))
            }
        }
    }

    /// `group.key` split at the first dot, when both parts are non-empty.
    private static func split(_ name: String) -> (String, String)? {
        guard let dot = name.firstIndex(of: "."), dot != name.startIndex, name.index(after: dot) != name.endIndex else {
            return nil
        }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }

    /// Seconds as milliseconds rounded to the microsecond.
    private static func milliseconds(_ seconds: Double) -> Double {
        (seconds * 1_000_000).rounded() / 1000
    }

    private static func number(_ object: JSONObject, _ key: String, path: String = "") throws(InputError) -> Double {
        guard let value = object[key] else { throw InputError(.missingField, "missing \"\(path)\(key)\"") }
        guard case .number(let number) = value else {
            throw InputError(.wrongType, "\"\(path)\(key)\" must be a number, not \(value.kindDescription)")
        }
        return number
    }

    private static func count(_ object: JSONObject, _ key: String, path: String = "") throws(InputError) -> Int {
        let number = try number(object, key, path: path)
        guard number >= 0, number < 9e15, number == number.rounded() else {
            throw InputError(.outOfRange, "\"\(path)\(key)\" must be a whole number of at least 0, not \(JSONWriter.text(of: number))")
        }
        return Int(number)
    }
}
