/// The size of the PUBLISH packet that carries a message, whole: what a broker's largest
/// packet (mosquitto's `max_packet_size`, MQTT 5's Maximum Packet Size) is compared with.
///
/// A broker closes the connection of a client that sends a larger packet (mosquitto
/// 2.0.11 logs "disconnected due to oversize packet"), and libmosquitto resends a QoS 1
/// message in flight after reconnecting; so a publisher that never hands over a larger
/// message is what keeps one too-large message from holding its connection down.
package enum PublishPacketSize {
    /// The bytes of the packet for a message of `topicBytes` and `payloadBytes` at `qos`,
    /// with correlation data of `correlationDataBytes` when it has some: the fixed header
    /// (a byte and the remaining length), the topic with its length, the packet id of a
    /// QoS 1 or 2 message, the MQTT 5 properties and the payload. The properties' length
    /// is counted under MQTT 3.1.1 too, which sends none: one byte more than the packet.
    package static func of(topicBytes: Int, payloadBytes: Int, qos: Int, correlationDataBytes: Int? = nil) -> Int {
        let properties = correlationDataBytes.map { 1 + 2 + $0 } ?? 0
        let remaining = 2 + topicBytes + (qos > 0 ? 2 : 0) + lengthBytes(properties) + properties + payloadBytes
        return 1 + lengthBytes(remaining) + remaining
    }

    /// How many bytes MQTT's variable byte integer takes for `value`: seven bits a byte.
    static func lengthBytes(_ value: Int) -> Int {
        var bytes = 1
        var rest = value >> 7
        while rest > 0 {
            bytes += 1
            rest >>= 7
        }
        return bytes
    }
}
