import CMosquitto
import Foundation

/// One libmosquitto connection that publishes a whole `PackedTraffic` at QoS 0 as fast
/// as it can, the way `../shared/bench/pubfile.c` does: no network thread (each
/// `mosquitto_publish` writes its packet on the calling thread), the socket serviced
/// every 256 messages, then the queue flushed.
///
/// libmosquitto directly rather than `MQTTClient`: that client runs its loop on a
/// network thread of its own, so every publish queues the packet and wakes that thread
/// (a write to a socket pair, a `select` and a read more per message), and checks the
/// topic in Swift first; the bench must not be what limits the rate it measures.
///
/// Not `Sendable`: one thread connects, publishes and closes.
final class BulkPublisher {
    /// How a publish went.
    struct Report: Sendable {
        var messages: Int
        /// From the first `mosquitto_publish` until the last byte was handed to the kernel.
        var seconds: Double
        var perSecond: Double { seconds > 0 ? Double(messages) / seconds : 0 }
    }

    private let handle: OpaquePointer
    /// Set by the connect callback: 0 while waiting, 1 accepted, 2 refused.
    private let connackState: UnsafeMutablePointer<Int32>

    /// Connects to the broker on 127.0.0.1:`port` and waits (up to 10 s) for its CONNACK.
    init(port: Int) throws {
        mosquitto_lib_init()
        connackState = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        connackState.initialize(to: 0)
        guard let handle = mosquitto_new("geotify-bench-bulk-\(getpid())", true, connackState) else {
            connackState.deallocate()
            throw BenchError("mosquitto_new failed")
        }
        self.handle = handle
        mosquitto_connect_callback_set(handle) { _, state, code in
            state?.assumingMemoryBound(to: Int32.self).pointee = code == 0 ? 1 : 2
        }
        let code = mosquitto_connect(handle, "127.0.0.1", Int32(port), 60)
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            close()
            throw BenchError("the publisher could not connect to 127.0.0.1:\(port): \(String(cString: mosquitto_strerror(code)))")
        }
        let deadline = BenchClock.now() + 10
        while connackState.pointee == 0 && BenchClock.now() < deadline {
            mosquitto_loop(handle, 50, 1)
        }
        guard connackState.pointee == 1 else {
            close()
            throw BenchError("the broker on 127.0.0.1:\(port) did not accept the publisher")
        }
    }

    /// Publishes every message of `traffic` at QoS 0, not retained.
    func publish(_ traffic: PackedTraffic) throws -> Report {
        var failure: Int32 = 0
        var published = 0
        let start = BenchClock.now()
        _ = traffic.forEach { topic, payload, length in
            let code = mosquitto_publish(handle, nil, topic, length, payload, 0, false)
            guard code == MOSQ_ERR_SUCCESS.rawValue else {
                failure = code
                return false
            }
            published += 1
            if published & 255 == 0 { mosquitto_loop(handle, 0, 1) }
            return true
        }
        while failure == 0 && mosquitto_want_write(handle) {
            failure = mosquitto_loop(handle, 100, 1)
        }
        let seconds = BenchClock.now() - start
        guard failure == MOSQ_ERR_SUCCESS.rawValue else {
            throw BenchError("publishing failed after \(published) messages: \(String(cString: mosquitto_strerror(failure)))")
        }
        return Report(messages: published, seconds: seconds)
    }

    /// Disconnects and frees the client.
    func close() {
        mosquitto_disconnect(handle)
        mosquitto_loop(handle, 100, 1)
        mosquitto_destroy(handle)
        connackState.deallocate()
    }
}
