import Dispatch
import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyTestSupport

/// What the announcer tells about the announcements asked of it, checked on a queue the
/// test holds: no broker, no timing.
@Suite("FenceChangeAnnouncer")
struct FenceChangeAnnouncerTests {
    /// An announcer whose work runs on `queue`; its publisher has no client and keeps what
    /// it is given.
    private func announcer(on queue: DispatchQueue) -> FenceChangeAnnouncer {
        let logger = Logger(level: .error, sink: { _ in })
        let counters = Counters()
        let messages = OutboundMessages(topics: Topics())
        let health = StateHealth(logger: logger, counters: counters, messages: messages, uptime: { 0 })
        let publisher = Publisher(logger: logger, counters: counters, health: health, waitingLimit: 1_000)
        return FenceChangeAnnouncer(
            publisher: publisher, presence: PresenceMessages(topics: Topics()), occupancy: Occupancy(), discovery: nil,
            waypoints: nil, announceLimit: 20, updates: LiveUpdates(), queue: queue)
    }

    @Test("not idle from the moment an announcement is asked for until it is handed over")
    func idleOnlyOnceEveryAnnouncementIsHandedOver() {
        let queue = DispatchQueue(label: "test.announcements")
        let announcer = announcer(on: queue)
        #expect(announcer.isIdle, "nothing asked for yet")
        // Held: the announcement cannot run, as one still being built or waiting for
        // the publisher's room cannot finish, while the publisher has nothing to send.
        queue.suspend()
        announcer.announceAll(FenceBook())
        announcer.announceAll(FenceBook())
        #expect(!announcer.isIdle, "two announcements asked for, none handed over")
        queue.resume()
        announcer.waitUntilAnnounced()
        #expect(announcer.isIdle, "both handed over")
    }
}
