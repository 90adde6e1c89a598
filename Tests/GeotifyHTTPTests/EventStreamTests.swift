import Dispatch
import GeotifyHTTP
import Synchronization
import Testing

@Suite struct EventStreamTests {
    @Test func anEventIsEncodedAsTheEventSourceFormat() {
        let event = ServerSentEvent(name: "device", data: "{\"a\":1}\nsecond line")
        #expect(String(decoding: event.encoded, as: UTF8.self) == "event: device\ndata: {\"a\":1}\ndata: second line\n\n")
        #expect(String(decoding: ServerSentEvent(name: "x\ny", data: "").encoded, as: UTF8.self) == "event: xy\ndata: \n\n")
    }

    /// Every line break is dropped from an event's name, a carriage return alone or before
    /// a line feed too: Swift reads `\r\n` as one character, which is neither `\r` nor
    /// `\n`, and it was sent, ending the `event:` field.
    @Test func everyLineBreakIsDroppedFromAnEventsName() {
        let event = ServerSentEvent(name: "fence\r\nchanged\r\n\r!", data: "x")
        #expect(String(decoding: event.encoded, as: UTF8.self) == "event: fencechanged!\ndata: x\n\n")
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

    /// The `retry:` field the stream opens with is its opening, not counted; what follows
    /// may add up to exactly the bound.
    @Test func aSubscriberExactlyAtTheBoundStaysOpen() throws {
        let event = ServerSentEvent(data: "0123456789")
        let stream = EventStream(maximumPending: event.encoded.count)
        let subscription = try #require(stream.subscribe())
        stream.publish(event)
        #expect(!subscription.isClosed, "maximumPending bytes may wait")
        #expect(subscription.bytesBehind == event.encoded.count)
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

    /// Clients that do not read cannot together hold more than `maximumPendingTotal`,
    /// however many there are, each within its own bound: when a send would pass the
    /// total, the subscriptions furthest behind are closed first (counted once each,
    /// what they had dropped), and one that reads everything is never closed for them.
    @Test func allStreamsTogetherHoldAtMostTheTotalAndTheFurthestBehindAreClosedFirst() throws {
        let overflows = Mutex(0)
        let stream = EventStream(maximumPending: 2000, maximumPendingTotal: 2100, onOverflow: { overflows.withLock { $0 += 1 } })
        let event = ServerSentEvent(data: String(repeating: "x", count: 92))
        #expect(event.encoded.count == 100)
        let reader = try #require(stream.subscribe())
        // Four that never read, each two events less behind than the one before it: 800,
        // 600, 400 and 200 bytes wait, 2000 together, each far within its own bound; the
        // next event for all five is 500 more.
        var behind: [EventSubscription] = []
        for _ in 0..<4 {
            behind.append(try #require(stream.subscribe()))
            for _ in 0..<2 {
                stream.publish(event)
                _ = drain(reader)
            }
        }
        #expect(behind.map(\.bytesBehind) == [800, 600, 400, 200])
        #expect(stream.pendingTotal == 2000)
        var publishes = 0
        while behind.contains(where: { !$0.isClosed }) && publishes < 100 {
            stream.publish(event)
            publishes += 1
            #expect(stream.pendingTotal <= stream.maximumPendingTotal)
            #expect(stream.pendingTotal == ([reader] + behind).map(\.bytesBehind).reduce(0, +), "the total is what the subscriptions hold")
            let closed = behind.map(\.isClosed)
            #expect(closed == closed.sorted { $0 && !$1 }, "those further behind are closed first: \(closed)")
            #expect(behind.filter(\.isClosed).allSatisfy { $0.pendingCount == 0 }, "what a closed one had is dropped")
            #expect(!reader.isClosed, "one that reads everything stays")
            #expect(drain(reader) == String(decoding: event.encoded, as: UTF8.self))
        }
        #expect(behind.allSatisfy { $0.isClosed })
        #expect(overflows.withLock { $0 } == 4, "each closed stream is counted once")
        #expect(stream.subscriberCount == 1)
        for _ in 0..<20 {
            stream.publish(event)
            _ = drain(reader)
        }
        #expect(!reader.isClosed)
        #expect(overflows.withLock { $0 } == 4)
        #expect(stream.pendingTotal == 0, "all read or dropped")
    }

    /// The total counts what waits and nothing else: it comes back to zero once every
    /// stream has been read, dropped for falling behind, or closed and read to its end,
    /// or let go with bytes unread (its client left).
    @Test func theTotalComesBackToZeroOnceEveryStreamIsReadOrGone() throws {
        let stream = EventStream(maximumPending: 250)
        let read = try #require(stream.subscribe())
        let overflowing = try #require(stream.subscribe())
        let closed = try #require(stream.subscribe())
        let opened = try #require(stream.subscribe())
        opened.open(Array(repeating: UInt8(ascii: "s"), count: 10_000))
        do {
            let left = try #require(stream.subscribe())
            stream.publish(ServerSentEvent(data: "0123456789"))
            #expect(left.bytesBehind == 18)
            #expect(stream.pendingTotal == 5 * 18, "openings are not counted")
            left.close()
        }
        #expect(stream.pendingTotal == 4 * 18, "a subscription let go gives back what waited for it")
        closed.close()
        _ = drain(read)
        for _ in 0..<20 {
            stream.publish(ServerSentEvent(data: "0123456789"))
            _ = drain(read)
        }
        #expect(overflowing.isClosed && opened.isClosed && !read.isClosed)
        #expect(stream.pendingTotal == 18, "only the event the closed stream has still to send waits")
        _ = drain(closed)
        #expect(closed.take(maximum: 10, park: {}, wake: {}) == .end)
        #expect(stream.pendingTotal == 0)
    }

    /// Publishers on two threads and readers on two others, some subscriptions never read
    /// (closed as they fall behind, and replaced): the total never passes its bound, and
    /// comes back to zero once the rest have been read.
    @Test func theTotalStaysExactWhilePublishersAndReadersRunAtOnce() throws {
        let overflows = Atomic(0)
        let stream = EventStream(maximumPending: 2000, maximumPendingTotal: 6000, onOverflow: { overflows.add(1, ordering: .relaxed) })
        let subscriptions = Mutex((0..<16).compactMap { _ in stream.subscribe() })
        let highest = Atomic(0)
        let work = DispatchGroup()
        for worker in 0..<4 {
            DispatchQueue.global().async(group: work) {
                for round in 0..<2000 {
                    if worker < 2 {
                        stream.publish(ServerSentEvent(data: String(repeating: "x", count: (round * 7 + worker) % 120)))
                    } else {
                        // Readers take what waits for the even subscriptions a little at a
                        // time, and replace the odd ones that were closed.
                        let all = subscriptions.withLock { $0 }
                        for (index, subscription) in all.enumerated() where index % 2 == 0 {
                            _ = subscription.take(maximum: 64, park: {}, wake: {})
                        }
                        subscriptions.withLock { all in
                            for index in all.indices where index % 2 == 1 && all[index].isClosed {
                                if let fresh = stream.subscribe() { all[index] = fresh }
                            }
                        }
                    }
                    highest.max(stream.pendingTotal, ordering: .relaxed)
                }
            }
        }
        work.wait()
        #expect(highest.load(ordering: .relaxed) <= 6000)
        #expect(overflows.load(ordering: .relaxed) > 0, "subscriptions not read were closed")
        let all = subscriptions.withLock { $0 }
        #expect(stream.pendingTotal == all.map(\.bytesBehind).reduce(0, +))
        for subscription in all { _ = drain(subscription) }
        #expect(stream.pendingTotal == 0)
    }

    /// A queue lets go of its memory as it is read, not only of its bytes: a stream that
    /// fell far behind and caught up keeps little room, so streams that fell behind in
    /// turn, each within the total, do not each keep what they once held.
    @Test func aQueueReadDownLetsGoOfTheRoomItOnceTook() throws {
        let stream = EventStream()
        let event = ServerSentEvent(data: String(repeating: "x", count: 1000))
        let pieces = try #require(stream.subscribe())
        let whole = try #require(stream.subscribe())
        for _ in 0..<1000 { stream.publish(event) }
        #expect(pieces.bytesHeld > 1_000_000 && whole.bytesHeld > 1_000_000)
        // As the server takes it: a few kilobytes at a time.
        while pieces.pendingCount > 10_000 {
            _ = pieces.take(maximum: 4096, park: {}, wake: {})
        }
        #expect(pieces.bytesHeld <= 4 * 10_000, "\(pieces.bytesHeld) bytes held for \(pieces.pendingCount) waiting")
        _ = drain(pieces)
        #expect(pieces.bytesHeld <= EventSubscription.keptRoom)
        _ = drain(whole)
        #expect(whole.bytesHeld <= EventSubscription.keptRoom)
        stream.publish(event)
        _ = drain(whole)
        #expect(whole.bytesHeld > 0, "a little room is kept for what comes next")
    }

    /// A carriage return ends a line in the format as a line feed does, alone or before
    /// one, so each of them splits the data into `data:` lines: a browser reassembles the
    /// data with line feeds.
    @Test func aCarriageReturnSplitsTheDataIntoLines() {
        let event = ServerSentEvent(data: "one\r\ntwo\rthree\nfour")
        #expect(String(decoding: event.encoded, as: UTF8.self) == "data: one\ndata: two\ndata: three\ndata: four\n\n")
    }

    /// What an opening holds; the tests watch it through a weak reference.
    final class Lease: Sendable {}

    /// A stream closed before its opening was taken lets go of the opening's lease at
    /// once (the count of unsent answers goes down), while the subscription lives on to
    /// send what it holds; the opening is still sent, then the stream ends.
    @Test func aStreamClosedBeforeItsOpeningIsTakenLetsGoOfItsLease() throws {
        let stream = EventStream()
        let subscription = try #require(stream.subscribe())
        weak var lease: Lease?
        do {
            let made = Lease()
            lease = made
            subscription.open(ServerSentEvent(name: "state", data: "{}").encoded, holding: made)
        }
        #expect(lease != nil, "held while the opening waits")
        subscription.close()
        #expect(lease == nil)
        #expect(drain(subscription) == "retry: 2000\n\nevent: state\ndata: {}\n\n")
        #expect(subscription.take(maximum: 10, park: {}, wake: {}) == .end)
    }
}
