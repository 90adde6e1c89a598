/// MQTT messages ready to publish, packed into flat buffers (topics as C strings, payloads
/// back to back) so that publishing them at full speed allocates nothing on the Swift
/// side and the publisher is as cheap as a C program reading a file.
///
/// Every payload ends with `"tst":<seconds>}`, so a message can also be re-sent with
/// another time in its place (`prepared`), as the latency run does.
struct PackedTraffic: Sendable {
    /// The distinct topics, each followed by a NUL byte.
    private var topicBytes: [UInt8] = []
    private var topicStarts: [Int] = []
    private var topicIndex: [String: Int] = [:]
    private var topicNames: [String] = []
    /// All payloads, back to back.
    private var payloadBytes: [UInt8] = []
    /// Per message: its topic, where its payload starts and ends, and where its `tst`
    /// value starts.
    private var entries: [(topic: Int, start: Int, end: Int, time: Int)] = []

    var count: Int { entries.count }

    /// Adds a message; `payload` must end with `"tst":<number>}`.
    mutating func append(topic: String, payload: String) {
        let topicNumber: Int
        if let known = topicIndex[topic] {
            topicNumber = known
        } else {
            topicNumber = topicStarts.count
            topicIndex[topic] = topicNumber
            topicNames.append(topic)
            topicStarts.append(topicBytes.count)
            topicBytes.append(contentsOf: topic.utf8)
            topicBytes.append(0)
        }
        let start = payloadBytes.count
        payloadBytes.append(contentsOf: payload.utf8)
        let key = Array(#""tst":"#.utf8)
        var time = payloadBytes.count - key.count
        while time > start, !payloadBytes[time..<(time + key.count)].elementsEqual(key) { time -= 1 }
        entries.append((topicNumber, start, payloadBytes.count, time + key.count))
    }

    /// Calls `body` with each message's topic (a C string), payload and payload length, in
    /// order, until it returns false; returns how many messages it was given.
    func forEach(_ body: (UnsafePointer<CChar>, UnsafeRawPointer, Int32) -> Bool) -> Int {
        topicBytes.withUnsafeBufferPointer { topics in
            payloadBytes.withUnsafeBytes { payloads in
                guard let topicBase = topics.baseAddress, let payloadBase = payloads.baseAddress else { return 0 }
                let names = UnsafeRawPointer(topicBase).assumingMemoryBound(to: CChar.self)
                var given = 0
                for entry in entries {
                    given += 1
                    guard body(names + topicStarts[entry.topic], payloadBase + entry.start, Int32(entry.end - entry.start)) else { break }
                }
                return given
            }
        }
    }

    /// Message `number` with its `tst` left for the sender to write.
    func prepared(_ number: Int) -> PositionPublishers.Prepared {
        let entry = entries[number]
        return PositionPublishers.Prepared(
            topic: topicNames[entry.topic], prefix: Array(payloadBytes[entry.start..<entry.time]))
    }

    /// The topic and payload of message `number`.
    func message(_ number: Int) -> (topic: String, payload: [UInt8]) {
        let entry = entries[number]
        return (topicNames[entry.topic], Array(payloadBytes[entry.start..<entry.end]))
    }

    /// The messages as `topic<TAB>payload` lines, the format `../shared/bench/pubfile.c`
    /// publishes, so other tools can replay exactly this traffic.
    func lines() -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(payloadBytes.count + entries.count * 24)
        for entry in entries {
            text.append(contentsOf: topicNames[entry.topic].utf8)
            text.append(UInt8(ascii: "\t"))
            text.append(contentsOf: payloadBytes[entry.start..<entry.end])
            text.append(UInt8(ascii: "\n"))
        }
        return text
    }
}
