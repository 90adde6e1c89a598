/// How an MQTT packet's length is written on the wire, for the test support's stand-ins
/// that read the raw bytes between a client and a broker (`SilentBroker`,
/// `AcknowledgementHoldingProxy`): after the packet's first byte, its remaining length
/// as a variable-length integer of one to four bytes, seven bits each, lowest first, and
/// then that many bytes.
package enum MQTTFraming {
    /// The remaining length whose first byte is at `index` of `bytes`, and how many bytes
    /// it took; nil while it is incomplete (or longer than the four bytes MQTT allows).
    package static func remainingLength(_ bytes: [UInt8], at index: Int) -> (length: Int, bytes: Int)? {
        var length = 0
        var shift = 0
        var offset = index
        while offset < bytes.count, offset - index < 4 {
            length |= Int(bytes[offset] & 0x7F) << shift
            if bytes[offset] & 0x80 == 0 { return (length, offset - index + 1) }
            shift += 7
            offset += 1
        }
        return nil
    }

    /// Where the whole packet whose first byte is at `start` of `bytes` ends; nil while
    /// it has not all come.
    package static func packetEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard let (length, header) = remainingLength(bytes, at: start + 1) else { return nil }
        let end = start + 1 + header + length
        return end <= bytes.count ? end : nil
    }
}
