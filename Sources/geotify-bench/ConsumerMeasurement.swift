import GeotifyJSON

/// One consumer's run in one round of the side-by-side scenario: how many of the
/// published messages it handled, how long from the first publish to the last message
/// handled, the CPU all its threads spent meanwhile, its peak memory, and what the
/// publisher, the broker and the bench itself spent, so a reader can tell which of them
/// set the pace.
struct ConsumerMeasurement: Sendable {
    enum Consumer: String, Sendable {
        case mosquittoSub = "mosquitto_sub"
        case geotify
    }

    var consumer: Consumer
    var round: Int
    /// 0 when it ran first in its round, 1 when second.
    var position: Int
    var pid: Int32
    /// The 1-minute load average just before publishing.
    var loadBefore: Double
    var published: Int
    var handled: Int
    /// From the first publish to the last message handled.
    var seconds: Double
    /// User plus system CPU of all the consumer's threads over `seconds`.
    var cpuSeconds: Double
    var peakResidentBytes: Int
    /// Threads the consumer had at the end.
    var threads: Int?
    var publish: BulkPublisher.Report
    /// The broker's CPU over the same span.
    var brokerCPUSeconds: Double
    /// The bench process's CPU over the same span (the publisher and the observer).
    var benchCPUSeconds: Double
    /// The bridge's counters from its last statistics (empty for mosquitto_sub).
    var counters: [String: Int] = [:]
    /// What did not add up: messages not handled, transitions not as expected, errors.
    var problems: [String] = []

    var perSecond: Double { seconds > 0 ? Double(handled) / seconds : 0 }
    var cpuMicrosecondsPerMessage: Double { handled > 0 ? cpuSeconds * 1e6 / Double(handled) : 0 }
    var brokerMicrosecondsPerMessage: Double { handled > 0 ? brokerCPUSeconds * 1e6 / Double(handled) : 0 }

    /// One line for the progress log.
    var summary: String {
        "round \(round) \(consumer.rawValue): \(ResultRow.count(handled))/\(ResultRow.count(published)) in \(ResultRow.format(seconds, .seconds)) = \(ResultRow.format(perSecond, .perSecond)), CPU \(ResultRow.format(cpuMicrosecondsPerMessage, .microseconds))/message (busy \(percent(cpuSeconds))), peak RSS \(ResultRow.format(Double(peakResidentBytes), .bytes)); publisher \(ResultRow.format(publish.perSecond, .perSecond)) (done at \(ResultRow.format(publish.seconds, .seconds))), broker busy \(percent(brokerCPUSeconds)), bench busy \(percent(benchCPUSeconds)); load before \(ResultRow.decimal(loadBefore, 2))"
            + (problems.isEmpty ? "" : "; PROBLEMS: " + problems.joined(separator: "; "))
    }

    /// CPU seconds as a share of one core over the run.
    private func percent(_ cpu: Double) -> String {
        seconds > 0 ? "\(ResultRow.decimal(100 * cpu / seconds, 0)) %" : "?"
    }

    var json: JSON {
        var object = JSONObject()
        object["consumer"] = .string(consumer.rawValue)
        object["round"] = .number(Double(round))
        object["position"] = .number(Double(position))
        object["pid"] = .number(Double(pid))
        object["loadBefore"] = .number(loadBefore)
        object["published"] = .number(Double(published))
        object["handled"] = .number(Double(handled))
        object["seconds"] = .number(seconds)
        object["messagesPerSecond"] = .number(perSecond)
        object["cpuSeconds"] = .number(cpuSeconds)
        object["cpuMicrosecondsPerMessage"] = .number(cpuMicrosecondsPerMessage)
        object["peakResidentBytes"] = .number(Double(peakResidentBytes))
        if let threads { object["threads"] = .number(Double(threads)) }
        object["publisherSeconds"] = .number(publish.seconds)
        object["publisherMessagesPerSecond"] = .number(publish.perSecond)
        object["brokerCPUSeconds"] = .number(brokerCPUSeconds)
        object["brokerMicrosecondsPerMessage"] = .number(brokerMicrosecondsPerMessage)
        object["benchCPUSeconds"] = .number(benchCPUSeconds)
        if !counters.isEmpty {
            object["counters"] = .object(JSONObject(counters.sorted { $0.key < $1.key }.map {
                JSONObject.Member(key: $0.key, value: .number(Double($0.value)))
            }))
        }
        object["problems"] = .array(problems.map(JSON.string))
        return .object(object)
    }
}
