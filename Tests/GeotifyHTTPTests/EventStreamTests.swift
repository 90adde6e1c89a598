import GeotifyHTTP
import Synchronization
import Testing

@Suite struct EventStreamTests {
    @Test func anEventIsEncodedAsTheEventSourceFormat() {
        let event = ServerSentEvent(name: "device", data: "{\"a\":1}\nsecond line")
        #expect(String(decoding: event.encoded, as: UTF8.self) == "event: device\ndata: {\"a\":1}\ndata: second line\n\n")
        #expect(String(decoding: ServerSentEvent(name: "x\ny", data: "").encoded, as: UTF8.self) == "event: xy\ndata: \n\n")
    }

    func drain(_ subscription: EventSubscription) -> String {
        var text = ""
        while case .bytes(let bytes) = subscription.take(maximum: 1 << 20, park: {}, wake: {}) {
            text += String(decoding: bytes, as: UTF8.self)
        }
        return text
    }

    @Test func aSubscriberGetsTheRetryFieldThenWhatIsPublished() throws {
        let stream = EventStream(retryMilliseconds: 1500)
        let subscription = try #require(stream.subscribe())
        stream.publish(ServerSentEvent(name: "a", data: "1"))
        stream.keepAlive()
        #expect(drain(subscription) == "retry: 1500\n\nevent: a\ndata: 1\n\n: keep-alive\n\n")
    }

    @Test func anEmptySubscriptionParksAndTheNextEventWakesItOnce() throws {
        let stream = EventStream()
        let subscription = try #require(stream.subscribe())
        _ = drain(subscription)
        let parked = Mutex(0)
        let woken = Mutex(0)
        let taken = subscription.take(maximum: 100, park: { parked.withLock { $0 += 1 } }, wake: { woken.withLock { $0 += 1 } })
        #expect(taken == .nothing)
        #expect(parked.withLock { $0 } == 1)
        stream.publish(ServerSentEvent(data: "x"))
        stream.publish(ServerSentEvent(data: "y"))
        #expect(woken.withLock { $0 } == 1)
        #expect(drain(subscription) == "data: x\n\ndata: y\n\n")
    }

    @Test func aSubscriberThatFallsTooFarBehindIsClosedAndRemoved() throws {
        let stream = EventStream(maximumPending: 64)
        let subscription = try #require(stream.subscribe())
        for _ in 0..<10 { stream.publish(ServerSentEvent(data: "0123456789")) }
        #expect(subscription.isClosed)
        #expect(subscription.pendingCount <= 64)
        #expect(stream.subscriberCount == 0)
        _ = drain(subscription)
        #expect(subscription.take(maximum: 10, park: {}, wake: {}) == .end)
    }

    @Test func subscribersBeyondTheLimitAreRefused() {
        let stream = EventStream(maximumSubscribers: 2)
        let first = stream.subscribe()
        let second = stream.subscribe()
        #expect(first != nil && second != nil)
        #expect(stream.subscribe() == nil)
        first?.close()
        #expect(stream.subscribe() != nil)
    }

    @Test func closingAllEndsEveryStreamAndWakesParkedOnes() throws {
        let stream = EventStream()
        let subscription = try #require(stream.subscribe())
        _ = drain(subscription)
        let woken = Mutex(false)
        _ = subscription.take(maximum: 10, park: {}, wake: { woken.withLock { $0 = true } })
        stream.closeAll()
        #expect(woken.withLock { $0 })
        #expect(subscription.take(maximum: 10, park: {}, wake: {}) == .end)
    }

    @Test func aSubscriberExactlyAtTheBoundStaysOpen() throws {
        let opening = try #require(EventStream().subscribe()).pendingCount
        let event = ServerSentEvent(data: "0123456789")
        let stream = EventStream(maximumPending: opening + event.encoded.count)
        let subscription = try #require(stream.subscribe())
        stream.publish(event)
        #expect(!subscription.isClosed, "maximumPending bytes may wait")
        stream.publish(event)
        #expect(subscription.isClosed)
    }

    /// The document a client starts from (the state of a large fence book) may be larger
    /// than the bound; the stream stays open, and what follows it may add up to the bound.
    @Test func anOpeningLargerThanTheBoundIsSentAndTheBoundAppliesAfterIt() throws {
        let stream = EventStream(maximumPending: 64)
        let subscription = try #require(stream.subscribe())
        let opening = ServerSentEvent(name: "state", data: String(repeating: "x", count: 1000)).encoded
        let opened = subscription.open(opening)
        #expect(opened)
        stream.keepAlive()
        stream.publish(ServerSentEvent(data: "0123456789"))
        #expect(!subscription.isClosed)
        #expect(drain(subscription).contains(String(decoding: opening, as: UTF8.self)))
        for _ in 0..<10 { stream.publish(ServerSentEvent(data: "0123456789")) }
        #expect(subscription.isClosed, "the bound applies to what follows the opening")
    }

    /// Bytes taken a few at a time while more are sent come out whole and in order, and
    /// the bound counts only what is not yet taken.
    @Test func bytesTakenInPiecesComeOutInOrderAndOnlyUnsentOnesCount() throws {
        let stream = EventStream(maximumPending: 1 << 20)
        let subscription = try #require(stream.subscribe())
        let opening = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        subscription.open(Array("event: state\n".utf8) + opening)
        var taken: [UInt8] = []
        var expected = Array("retry: 2000\n\nevent: state\n".utf8) + opening
        for index in 0..<1000 {
            if case .bytes(let bytes) = subscription.take(maximum: 1000, park: {}, wake: {}) { taken += bytes }
            if index % 7 == 0 {
                let event = ServerSentEvent(data: "\(index)")
                stream.publish(event)
                expected += event.encoded
            }
        }
        while case .bytes(let bytes) = subscription.take(maximum: 1000, park: {}, wake: {}) { taken += bytes }
        #expect(taken == expected)

        let bounded = EventStream(maximumPending: 64)
        let small = try #require(bounded.subscribe())
        _ = drain(small)
        let event = ServerSentEvent(data: String(repeating: "x", count: 52))
        #expect(event.encoded.count == 60)
        bounded.publish(event)
        _ = small.take(maximum: 20, park: {}, wake: {})
        bounded.publish(ServerSentEvent(data: "0123456789ab"))
        #expect(!small.isClosed, "40 bytes wait and 20 more come: within the bound of 64")
        #expect(small.pendingCount == 60)
    }
}
