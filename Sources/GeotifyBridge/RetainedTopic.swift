/// One of the bridge's own retained topics found on the broker at a start, as
/// `RetainedSweep.read` understood it from its levels (and, for a Home Assistant
/// discovery config, from the topic its entity reads): what it speaks for, so the sweep
/// can tell whether the fences in force still account for it.
package struct RetainedTopic: Hashable, Sendable {
    /// What a retained topic speaks for.
    package enum Subject: Hashable, Sendable {
        /// A device's state document, tracker or badge (`fence` nil), or its presence in
        /// `fence` (`DeviceTopic.presence`).
        case device(DeviceTopic, device: String, fence: String?)
        /// The occupancy count of the shared `fence` of `owner` (`shared` or a group's name).
        case occupancy(owner: String, fence: String)
        /// A Home Assistant config of an entity of `device`: its tracker, badge, reset
        /// button or fence event (`fence` nil), or its presence sensor for `fence`.
        case deviceEntity(device: String, fence: String?)
        /// A Home Assistant config of an occupancy entity (count or occupied) of the
        /// shared `fence` of `owner`.
        case sharedEntity(owner: String, fence: String)
    }

    /// The topic as the broker has it: what an empty retained message clears.
    package let topic: String
    package let subject: Subject

    package init(topic: String, subject: Subject) {
        self.topic = topic
        self.subject = subject
    }

    /// The device whose lane decides about this topic (its last values are the lane's
    /// to publish); nil for a shared fence's count and for every discovery config, which
    /// the announcer publishes.
    package var laneDevice: String? {
        if case .device(_, let device, _) = subject { return device }
        return nil
    }
}
