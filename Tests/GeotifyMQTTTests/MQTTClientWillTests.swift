import CBufferedSocket
import CMosquitto
import Foundation
@testable import GeotifyMQTT
import GeotifyTestSupport
import Synchronization
import Testing

/// The will is tested against a real broker: the client sets it in CONNECT and the
/// broker publishes it when the connection ends without DISCONNECT. A crash cannot be
/// staged inside the test process, and stopping the broker does not make it publish
/// wills, so the unclean end is made at the socket: `dropConnectionUncleanly()` shuts
/// the client's TCP socket down under libmosquitto (exactly what the broker sees when a
/// process dies or the network fails). A clean `stop()` sends DISCONNECT, and the broker
/// must then discard the will.
@Suite("MQTTClient will", .timeLimit(.minutes(1)), .waiting)
struct MQTTClientWillTests {
    @Test("the broker publishes the (retained) will when the connection drops uncleanly")
    func willOnUncleanDrop() throws {
        let (broker, topic, observer, fixture) = try connectedWithWill()
        #expect(observer.messages.isEmpty)
        let mark = fixture.events.count

        fixture.client.dropConnectionUncleanly()

        let will = observer.waitForMessage(on: topic)
        #expect(will?.text == "offline")
        #expect(will?.qos == 1)
        let disconnect = fixture.events.waitFor(after: mark) { event -> Int? in
            if case .disconnected(let code, _) = event { return code }
            return nil
        }
        #expect(disconnect != nil && disconnect != 0)
        #expect(fixture.events.waitForConnected(after: mark, timeout: 15) != nil)
        fixture.client.stop()

        let late = try TestClient(port: broker.port)
        try late.subscribe(topic)
        let retained = late.waitForMessage(on: topic)
        #expect(retained?.text == "offline")
        #expect(retained?.retain == true)
    }

    @Test("stop() disconnects cleanly, so the broker does not publish the will")
    func noWillOnStop() throws {
        let id = "geotify-clean-\(UUID().uuidString.prefix(8))"
        let (broker, topic, observer, fixture) = try connectedWithWill(clientID: id)
        fixture.client.stop()

        // The broker logs the clean disconnect when it handles DISCONNECT, after which a
        // will would already have been published (and retained) or dropped for good.
        #expect(waitUntil { broker.log.contains("Client \(id) disconnected.") })
        let late = try TestClient(port: broker.port)
        try late.subscribe(topic)
        // A marker published after subscribing arrives after any retained will would.
        try observer.publish(topic + "/marker", "marker")
        try late.subscribe(topic + "/marker")
        try observer.publish(topic + "/marker", "marker")
        #expect(late.waitForMessage(on: topic + "/marker") != nil)
        #expect(late.waitForMessages(on: topic, count: 1, timeout: 0.2).isEmpty)
        #expect(observer.waitForMessages(on: topic, count: 1, timeout: 0.2).isEmpty)
    }

    /// The will goes with the QoS and retain flag it was given: at QoS 2 and not
    /// retained, the broker publishes it at QoS 2 and keeps nothing for a later subscriber.
    /// A stop whose DISCONNECT cannot leave (the broker reads nothing, and what the client
    /// wrote before fills both ends' socket buffers, a few MiB each on loopback) ends the
    /// connection once the stop's grace has passed, without a DISCONNECT, and says so: the
    /// broker then publishes the will. Before, such a stop said it had ended cleanly, left
    /// the socket open until the process ended, and the will came unannounced.
    @Test("a stop that cannot send its DISCONNECT ends the connection, says so, and the will is published")
    func stopWithoutRoomForTheDisconnect() throws {
        let (broker, topic, observer, fixture) = try connectedWithWill()
        broker.pause()
        let payload = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        for _ in 0..<32 {
            _ = try fixture.client.publish(topic: topic + "/bulk", payload: payload, qos: 0, retain: false)
        }
        let mark = fixture.events.count
        fixture.client.stop()
        let ended = fixture.events.waitFor(after: mark) { event -> (Int, String)? in
            if case .disconnected(let code, let reason) = event { return (code, reason) }
            return nil
        }
        #expect(ended?.0 == Int(MOSQ_ERR_TIMEOUT.rawValue), "\(String(describing: ended))")
        #expect(ended?.1.contains("the DISCONNECT could not be sent") == true, "\(String(describing: ended))")
        broker.resume()
        #expect(observer.waitForMessage(on: topic)?.text == "offline")
    }

    /// The same when libmosquitto could write the DISCONNECT, into the read buffer's
    /// gathered bytes (CBufferedSocket), but the kernel does not take them: libmosquitto
    /// closes the socket as soon as it has written the DISCONNECT and calls the end clean,
    /// and the close, after waiting its second for the kernel, drops what was gathered,
    /// the DISCONNECT with it. Before, such a stop said it had ended cleanly, and a real
    /// broker published the will. Reached by handing the client one message at a time,
    /// each written before the next, while the broker reads nothing, until five messages'
    /// worth wait gathered behind bytes the kernel refused: the flushes of four turns took
    /// none of them, and libmosquitto has nothing queued ahead of the DISCONNECT. Small
    /// socket buffers of fixed size at both ends keep the kernel from finding room again.
    @Test("a stop whose DISCONNECT is gathered but never taken by the kernel says so")
    func stopWithTheDisconnectGatheredButNotSent() throws {
        let broker = try SilentBroker(receiveBuffer: 4_096)
        defer { broker.resumeReading() }
        let recorder = EventRecorder()
        /// The bytes the network thread had gathered, unsent, when it wrote the last message.
        let gathered = Mutex(0)
        var options = MQTTOptions(clientID: "geotify-gathered-\(UUID().uuidString.prefix(8))", port: broker.port)
        options.cleanSession = true
        let client = try MQTTClient(options: options) { event in
            switch event {
            case .connected:
                // On the network thread, whose buffer has the socket attached: a send buffer
                // of fixed size, which the kernel would otherwise grow to megabytes as soon
                // as the broker acknowledges something.
                var size: Int32 = 16_384
                _ = setsockopt(geotify_buffered_socket_socket(), SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            case .published:
                gathered.withLock { $0 = geotify_buffered_socket_unsent() }
            default:
                break
            }
            recorder.record(event)
        }
        try client.start()
        try #require(recorder.waitForConnected() != nil)
        broker.holdReading()
        let payload = [UInt8](repeating: UInt8(ascii: "a"), count: 8_192)
        var full = false
        for _ in 0..<1_000 where !full {
            let id = try client.publish(topic: "bulk", payload: payload, qos: 0, retain: false)
            guard recorder.waitForPublished(id) else { break }
            full = gathered.withLock { $0 } >= 5 * payload.count
        }
        try #require(full, "the kernel never refused what was gathered")
        let mark = recorder.count
        client.stop()
        let ended = recorder.waitFor(after: mark) { event -> (code: Int, reason: String)? in
            if case .disconnected(let code, let reason) = event { return (code, reason) }
            return nil
        }
        broker.resumeReading()
        #expect(waitUntil { broker.isClosed })
        #expect(broker.packetTypes.last != 14, "the DISCONNECT went with what was gathered: \(broker.packetTypes.suffix(3))")
        #expect(ended?.code == Int(MOSQ_ERR_TIMEOUT.rawValue), "\(String(describing: ended))")
        #expect(ended?.reason.contains("the DISCONNECT could not be sent") == true, "\(String(describing: ended))")
    }

    @Test("a will at QoS 2 that is not retained is published at QoS 2 and not kept")
    func unretainedWillAtQoS2() throws {
        let (broker, topic, observer, fixture) = try connectedWithWill(qos: 2, retain: false)
        fixture.client.dropConnectionUncleanly()
        let will = observer.waitForMessage(on: topic)
        #expect(will?.text == "offline")
        #expect(will?.qos == 2)
        fixture.client.stop()

        let late = try TestClient(port: broker.port)
        try late.subscribe(topic)
        // A marker published after subscribing arrives after any retained will would.
        try late.subscribe(topic + "/marker")
        try observer.publish(topic + "/marker", "marker")
        #expect(late.waitForMessage(on: topic + "/marker") != nil)
        #expect(late.waitForMessages(on: topic, count: 1, timeout: 0.2).isEmpty)
    }

    /// A broker, an observer subscribed to a topic of its own (at `qos`), and a client
    /// connected with the will `offline` on that topic at `qos`, retained or not.
    private func connectedWithWill(
        qos: Int = 1, retain: Bool = true, clientID: String? = nil
    ) throws -> (TestBroker, String, TestClient, ClientFixture) {
        let broker = try TestBroker()
        let topic = uniqueTopic("will")
        let observer = try TestClient(port: broker.port)
        try observer.subscribe(topic, qos: qos)
        let fixture = try ClientFixture(port: broker.port) {
            if let clientID { $0.clientID = clientID }
            $0.will = MQTTWill(topic: topic, payload: Array("offline".utf8), qos: qos, retain: retain)
        }
        try fixture.waitConnected()
        return (broker, topic, observer, fixture)
    }
}
