import Dispatch
import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import Synchronization
import Testing

/// The network loop reads every packet that has arrived before it reports the burst's
/// end (`.caughtUp`), where the bridge hands the burst to its lanes as one batch: at QoS 1
/// as at QoS 0. (libmosquitto's own wake-up pipe, written for each packet it queues, once
/// full made every QoS 1 burst end after its first packet: one batch, one commit and one
/// fence write per message.)
@Suite("MQTTClient bursts", .timeLimit(.minutes(1)))
struct MQTTClientBurstTests {
    @Test("messages waiting in the socket are read in one burst, at QoS 0 and 1", arguments: [0, 1])
    func waitingMessagesAreOneBurst(qos: Int) throws {
        let broker = try TestBroker()
        let topic = uniqueTopic("burst")
        /// "m" for each message, "c" for each end of a burst, in the order they came.
        let sequence = Mutex<[Character]>([])
        let release = DispatchSemaphore(value: 0)
        let recorder = EventRecorder()
        var options = MQTTOptions(clientID: "geotify-burst-\(UUID().uuidString.prefix(8))", port: broker.port)
        options.cleanSession = true
        let receiver = try MQTTClient(options: options) { event in
            recorder.record(event)
            switch event {
            case .message(let message):
                sequence.withLock { $0.append("m") }
                // Hold the network thread on the first message while the others arrive.
                if message.payload == [0] { _ = release.wait(timeout: .now() + 20) }
            case .caughtUp:
                sequence.withLock { $0.append("c") }
            default:
                break
            }
        }
        defer { receiver.stop() }
        try receiver.start()
        #expect(recorder.waitForConnected() != nil)
        #expect(recorder.waitForSubscribed(try receiver.subscribe(topic, qos: qos)) == [qos])

        // libmosquitto writes a byte to its wake-up pipe for every packet it queues; a
        // client that has sent a few thousand has filled it for good, as a running bridge has.
        for _ in 0..<3_000 { try receiver.publish(topic: uniqueTopic("filler"), payload: [], qos: 0, retain: false) }

        // mosquitto sends at most 20 QoS 1 messages before the receiver acknowledges them.
        let count = 20
        let sender = try TestClient(port: broker.port)
        for index in 0..<count { try sender.publish(topic, bytes: [UInt8(index)], qos: qos) }
        let sent = "Sending PUBLISH to \(options.clientID) "
        #expect(waitUntil { broker.log.components(separatedBy: sent).count - 1 >= count }, "the broker sent all \(count)")
        release.signal()
        #expect(waitUntil { sequence.withLock { $0.filter { $0 == "m" }.count } == count })

        let events = sequence.withLock { $0 }
        let bursts = events.split(separator: "c").filter { !$0.isEmpty }
        #expect(bursts.count <= 2, "the \(count) messages waiting in the socket came in \(bursts.count) bursts: \(String(events))")
    }
}
