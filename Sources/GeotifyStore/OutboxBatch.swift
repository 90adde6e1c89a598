/// Outbox messages with consecutive ids, stored as one row of the `outbox_batch` table:
/// what one commit appends. A row a commit rather than a row a message: inserting the
/// messages one by one was 8 % of the bridge's CPU under position traffic, more than
/// the commit that wrote them (BENCHMARKS.md).
///
/// The row holds the id of its first message, how many follow, and their bytes: per
/// message a flags byte (the QoS in bits 0–1, retain in bit 2), the topic's length
/// (4 bytes, little-endian) and UTF-8 bytes, then the payload's length and bytes. The
/// database is the bridge's own, but it is read back as untrusted: a row whose bytes do
/// not add up is a `StoreError`, never a crash.
package enum OutboxBatch {
    /// The most messages one row holds (a larger commit writes several rows), so that
    /// the rows holding the ids past a mark are found by a range of first ids
    /// (`first > mark - capacity`) and a row read for one message decodes few others.
    package static let capacity = 1_024

    /// The bytes of `messages`, in order.
    package static func encode(_ messages: ArraySlice<OutboxMessage>) -> [UInt8] {
        var size = 0
        for message in messages { size += 9 + message.topic.utf8.count + message.payload.count }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        for message in messages {
            bytes.append(UInt8(truncatingIfNeeded: message.qos & 3) | (message.retain ? 4 : 0))
            append(UInt32(truncatingIfNeeded: message.topic.utf8.count), to: &bytes)
            bytes.append(contentsOf: message.topic.utf8)
            append(UInt32(truncatingIfNeeded: message.payload.count), to: &bytes)
            bytes.append(contentsOf: message.payload)
        }
        return bytes
    }

    /// The `count` messages in `bytes`; throws when the bytes do not hold exactly that.
    package static func decode(_ bytes: [UInt8], count: Int) throws(StoreError) -> [OutboxMessage] {
        try decode(bytes, count: count, keeping: 0..<max(0, count))
    }

    /// The messages at the positions `kept` among the `count` in `bytes` (the others
    /// are checked as thoroughly, but not made: a row read for its last few messages
    /// makes no strings and arrays for the ones before). Throws when the bytes do not
    /// hold exactly `count` messages.
    package static func decode(_ bytes: [UInt8], count: Int, keeping kept: Range<Int>) throws(StoreError) -> [OutboxMessage] {
        var messages: [OutboxMessage] = []
        messages.reserveCapacity(max(0, min(kept.clamped(to: 0..<max(0, count)).count, capacity)))
        var offset = 0
        var position = 0
        func length() throws(StoreError) -> Int {
            guard bytes.count - offset >= 4 else { throw damaged("it ends inside a length") }
            var value = 0
            for shift in 0..<4 { value |= Int(bytes[offset + shift]) << (8 * shift) }
            offset += 4
            guard bytes.count - offset >= value else { throw damaged("a length runs past its end") }
            return value
        }
        while offset < bytes.count {
            guard position < count else { throw damaged("it holds more than its \(count) messages") }
            let flags = bytes[offset]
            offset += 1
            guard flags & ~7 == 0, flags & 3 != 3 else { throw damaged("a message has the flags \(flags)") }
            let topicLength = try length()
            let topicStart = offset
            offset += topicLength
            let payloadLength = try length()
            if kept.contains(position) {
                messages.append(OutboxMessage(
                    topic: String(decoding: bytes[topicStart..<topicStart + topicLength], as: UTF8.self),
                    payload: Array(bytes[offset..<offset + payloadLength]), qos: Int(flags & 3), retain: flags & 4 != 0))
            }
            offset += payloadLength
            position += 1
        }
        guard position == count else { throw damaged("it holds \(position) messages, not \(count)") }
        return messages
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * shift))) }
    }

    private static func damaged(_ reason: String) -> StoreError {
        StoreError("read the outbox", "a stored batch of messages is damaged: \(reason)")
    }
}
