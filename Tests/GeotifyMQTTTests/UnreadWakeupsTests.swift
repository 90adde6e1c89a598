import CBufferedSocket
import GeotifyMQTT
import GeotifyTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// libmosquitto's wake-up socket pair, which the network loop never reads, is not made
/// (UnreadWakeups.h); every other `socketpair` works as the C library's.
@Suite(.waiting) struct UnreadWakeupsTests {
    @Test func aClientIsMadeWithoutTheWakeupPairAndStillDeliversEachWay() throws {
        let broker = try TestBroker()
        let before = geotify_unread_wakeups_refused()
        let sender = try ClientFixture(port: broker.port)
        #expect(geotify_unread_wakeups_refused() == before + 1, "libmosquitto asked for its pair once, and was refused")
        let receiver = try ClientFixture(port: broker.port)
        try sender.waitConnected()
        try receiver.waitConnected()
        let topic = uniqueTopic("wakeups")
        let subscription = try receiver.client.subscribe(topic, qos: 1)
        #expect(receiver.events.waitForSubscribed(subscription) == [1])
        let ids = try (0..<50).map { try sender.client.publish(topic: topic, payload: [UInt8($0)], qos: 1, retain: false) }
        for id in ids { #expect(sender.events.waitForPublished(id)) }
        #expect(waitUntil { receiver.events.messages.count >= 50 })
        #expect(receiver.events.messages.map(\.payload) == (0..<50).map { [UInt8($0)] })
        sender.client.stop()
        receiver.client.stop()
    }

    @Test func otherSocketPairsAreMadeAsUsual() {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        var byte: UInt8 = 7
        #expect(write(pair[1], &byte, 1) == 1)
        byte = 0
        #expect(read(pair[0], &byte, 1) == 1 && byte == 7)
        close(pair[0])
        close(pair[1])
    }
}
