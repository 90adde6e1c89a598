import GeotifyCore
import GeotifyJSON
import GeotifyMQTT

/// A command's reply made to fit in the largest packet the broker takes
/// (`maximumPacketBytes`): the broker closes the connection of a client that publishes a
/// larger one, so such a reply is never sent as it is. Pure.
///
/// The replies that can grow so large are those that carry fences: a polygon fence of the
/// file may have a hundred thousand corners, and a `list` holds every fence of the device.
/// A `list` or `get`, whose fences are the whole answer and which changed nothing, is
/// refused instead (`message_too_large`). Any other reply tells what was done (a change
/// written, a preview's token), so it keeps `ok` and its other members and goes without
/// the fences (`fence`, `previous`, `deleted`, and in a `preview` also its `notification`,
/// which holds the note), naming them in `omitted`, with a warning saying why.
package struct ReplyFit: Sendable {
    /// What becomes of a reply.
    package enum Outcome: Sendable, Equatable {
        /// It fits as it is.
        case fits
        /// It fits without its fences: this is the reply to send.
        case trimmed(JSONObject)
        /// A `list` or `get` too large: refuse it with this error.
        case refused(InputError)
    }

    /// The largest packet the broker takes.
    package let maximumPacketBytes: Int
    /// The bridge's messages, whose `reply(_:to:)` makes the reply's topic and payload.
    package let messages: OutboundMessages

    package init(maximumPacketBytes: Int, messages: OutboundMessages) {
        self.maximumPacketBytes = maximumPacketBytes
        self.messages = messages
    }

    /// The members of a reply that hold fences, left out of a trimmed one.
    static let fenceMembers: Set<String> = ["fence", "previous", "deleted", "fences"]
    /// The members of a `preview` that hold fences or a fence's note.
    static let previewMembers: Set<String> = ["fence", "previous", "notification"]

    /// What becomes of `reply`, an `ok` reply to `request` (published on the device's
    /// reply topic and on the request's response topic, when it has one).
    package func fit(_ reply: JSONObject, to request: CommandRequest) -> Outcome {
        let size = largestPacket(reply, request)
        guard size > maximumPacketBytes else { return .fits }
        if request.action == "list" || request.action == "get" {
            return .refused(InputError(
                .messageTooLarge,
                "the reply would be a packet of \(size) bytes, more than the \(maximumPacketBytes) the broker takes (maximumPacketBytes); nothing was changed: read the fences with the web console or geotify fences, or raise the broker's max_packet_size and maximumPacketBytes together"))
        }
        var trimmed = JSONObject()
        var omitted: [JSON] = []
        for member in reply.members {
            if Self.fenceMembers.contains(member.key) {
                omitted.append(.string(member.key))
            } else if member.key == "preview", case .object(let preview) = member.value {
                var kept = JSONObject()
                for inner in preview.members {
                    if Self.previewMembers.contains(inner.key) {
                        omitted.append(.string("preview.\(inner.key)"))
                    } else {
                        kept[inner.key] = inner.value
                    }
                }
                trimmed["preview"] = .object(kept)
            } else if member.key != "warnings" {
                trimmed[member.key] = member.value
            }
        }
        var warnings = reply["warnings"]?.arrayValue ?? []
        warnings.append(.string(
            "the reply would be a packet of \(size) bytes, more than the \(maximumPacketBytes) the broker takes (maximumPacketBytes), so it goes without the members in \"omitted\"; the command was carried out"))
        trimmed["omitted"] = .array(omitted)
        trimmed["warnings"] = .array(warnings)
        return .trimmed(trimmed)
    }

    /// The larger of the packets `reply` would go in: on the device's reply topic, and on
    /// the response topic with the correlation data.
    private func largestPacket(_ reply: JSONObject, _ request: CommandRequest) -> Int {
        let message = messages.reply(reply, to: request.device)
        let plain = PublishPacketSize.of(topicBytes: message.topic.utf8.count, payloadBytes: message.payload.count, qos: message.qos)
        guard let responseTopic = request.responseTopic else { return plain }
        let response = PublishPacketSize.of(
            topicBytes: responseTopic.utf8.count, payloadBytes: message.payload.count, qos: message.qos,
            correlationDataBytes: request.correlationData?.count)
        return max(plain, response)
    }
}
