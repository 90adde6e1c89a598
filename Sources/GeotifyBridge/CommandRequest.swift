import GeotifyJSON

/// Where and how to answer a command: its device, the correlation `id` and action name
/// it carried (echoed in every reply, a refusal's too), and an MQTT v5 response topic
/// with correlation data when the request had them and the topic is allowed.
package struct CommandRequest: Sendable, Equatable {
    package var device: String
    /// The topic it came on, for log lines and error reports.
    package var topic: String
    package var id: String?
    package var action: String?
    package var responseTopic: String?
    package var correlationData: [UInt8]?
    /// Who waits for the reply in the process instead of on MQTT (`Inbound.requester`).
    package var requester: Int?

    package init(device: String, topic: String, id: String? = nil, action: String? = nil, responseTopic: String? = nil, correlationData: [UInt8]? = nil, requester: Int? = nil) {
        self.device = device
        self.topic = topic
        self.id = id
        self.action = action
        self.responseTopic = responseTopic
        self.correlationData = correlationData
        self.requester = requester
    }

    /// The members every reply starts with: `id` and `action` when known.
    package var replyHead: JSONObject {
        var reply = JSONObject()
        if let id { reply["id"] = .string(id) }
        if let action { reply["action"] = .string(action) }
        return reply
    }
}
