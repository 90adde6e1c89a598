import Foundation
import GeotifyCore
import GeotifyDelivery
import GeotifyStore
import GeotifyTestSupport
import Synchronization
import Testing

/// The worker against local servers, its clock a `ManualScheduler`: back-off, `Retry-After`
/// and the retry window pass by advancing it, never by waiting.
@Suite("Delivery worker", .waiting)
struct DeliveryWorkerTests {
    /// Notifications of `device` at successive fix times.
    func notifications(_ device: String, _ count: Int, from start: Double = 1_700_000_000) -> [GeotifyCore.Notification] {
        (0..<count).map { Samples.notification(device: device, kind: $0 % 2 == 0 ? .enter : .exit, timestamp: start + Double($0)) }
    }

    @Test func everyNotificationIsDeliveredOnceInOrderPerDevice() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        var target = Samples.webhook(url: server.url)
        target.limits.concurrency = 4
        let harness = try WorkerHarness(targets: [target])
        harness.worker.start()
        defer { harness.worker.stop() }
        let alice = notifications("alice/phone", 5)
        let bob = notifications("bob/phone", 5)
        try harness.enqueue(alice + bob, for: "hook")
        #expect(waitUntil { (try? harness.counts("hook").delivered) == 10 })
        // The last delivery is committed before it is reported: wait for its report too.
        harness.settle()
        let keys = server.requests.compactMap { $0.headers["idempotency-key"] }
        #expect(keys.filter { $0.hasPrefix("alice/") } == alice.map(\.eventID))
        #expect(keys.filter { $0.hasPrefix("bob/") } == bob.map(\.eventID))
        #expect(harness.reports.filter { if case .delivered = $0 { true } else { false } }.count == 10)
    }

    @Test func aTargetDownForAWhileGetsEverythingOnceInOrderWhenBack() throws {
        let down = Atomic(true)
        let server = try TestHTTPServer { _ in down.load(ordering: .relaxed) ? .init(status: 503, body: "maintenance") : .init(body: "{}") }
        defer { server.stop() }
        let harness = try WorkerHarness(targets: [Samples.webhook(url: server.url)])
        harness.worker.start()
        defer { harness.worker.stop() }
        let alice = notifications("alice/phone", 3)
        let bob = notifications("bob/phone", 2)
        try harness.enqueue(alice + bob, for: "hook")
        #expect(waitUntil { server.requests.count >= 2 })
        harness.settle()
        for _ in 0..<60 { harness.advance(by: 30) }
        let whileDown = server.requests.count
        #expect(try harness.counts("hook").retrying == 2)
        #expect(try harness.counts("hook").lastError == "HTTP 503: maintenance")
        down.store(false, ordering: .relaxed)
        for _ in 0..<200 where (try harness.counts("hook").delivered) < 5 { harness.advance(by: 30) }
        #expect(try harness.counts("hook") == {
            var counts = DeliveryCounts(target: "hook")
            counts.delivered = 5
            counts.lastError = "HTTP 503: maintenance"
            counts.lastErrorAt = try harness.counts("hook").lastErrorAt
            return counts
        }())
        let acknowledged = server.requests.dropFirst(whileDown).compactMap { $0.headers["idempotency-key"] }
        #expect(acknowledged.filter { $0.hasPrefix("alice/") } == alice.map(\.eventID))
        #expect(acknowledged.filter { $0.hasPrefix("bob/") } == bob.map(\.eventID))
        // Half an hour down: the target was probed with back-off, not hammered.
        #expect(whileDown <= 20)
    }

    @Test func a429WithRetryAfterIsWaitedOutExactly() throws {
        let answered = Atomic(0)
        let server = try TestHTTPServer { _ in
            answered.add(1, ordering: .relaxed).oldValue == 0 ? .init(status: 429, headers: ["Retry-After": "120"], body: "slow down") : .init(body: "{}")
        }
        defer { server.stop() }
        let harness = try WorkerHarness(targets: [Samples.webhook(url: server.url)])
        harness.worker.start()
        defer { harness.worker.stop() }
        try harness.enqueue([Samples.notification()], for: "hook")
        #expect(waitUntil { (try? harness.counts("hook").retrying) == 1 })
        harness.settle()
        let row = try #require(try harness.queue.heads().first)
        #expect(row.due == Samples.now + 120)
        harness.advance(by: 119)
        #expect(server.requests.count == 1)
        #expect(harness.worker.attemptsUnderWay == 0)
        harness.advance(by: 1)
        #expect(waitUntil { (try? harness.counts("hook").delivered) == 1 })
        #expect(server.requests.map { $0.headers["idempotency-key"] } == [row.entry.eventID, row.entry.eventID])
        #expect(server.requests[0].headers["geotify-signature"]?.hasPrefix("t=1700000000,") == true)
        #expect(server.requests[1].headers["geotify-signature"]?.hasPrefix("t=1700000120,") == true)
        // The report counts both attempts, the one that failed included.
        harness.settle()
        #expect(harness.reports.contains(.delivered(target: "hook", eventID: row.entry.eventID, attempts: 2)))
    }

    /// A day asked for by `Retry-After` to a delivery whose window is an hour: its last
    /// attempt is made at the window's end and goes through, and a delivery queued after
    /// that starts at once, the target's rest having ended with the failing delivery's
    /// window (the worker hands each attempt's window to the target's traffic).
    @Test func aRetryAfterPastTheWindowEndsWithItForTheDeliveriesAfter() throws {
        let answered = Atomic(0)
        let server = try TestHTTPServer { _ in
            answered.add(1, ordering: .relaxed).oldValue == 0 ? .init(status: 429, headers: ["Retry-After": "86400"], body: "tomorrow") : .init(body: "{}")
        }
        defer { server.stop() }
        var target = Samples.webhook(url: server.url)
        target.retryFor = 3600
        let harness = try WorkerHarness(targets: [target])
        harness.worker.start()
        defer { harness.worker.stop() }
        try harness.enqueue([Samples.notification(device: "alice/phone")], for: "hook")
        #expect(waitUntil { (try? harness.counts("hook").retrying) == 1 })
        harness.settle()
        harness.advance(by: 3600)
        #expect(waitUntil { (try? harness.counts("hook").delivered) == 1 })
        harness.settle()
        harness.advance(by: 100)
        try harness.enqueue([Samples.notification(device: "bob/phone")], for: "hook")
        #expect(waitUntil { (try? harness.counts("hook").delivered) == 2 }, "bob's delivery starts at once, the clock not moved")
    }

    /// A rate limit shorter than a second spaces the attempts by exactly its window: the
    /// worker's timer for the next start is not rounded up.
    @Test func aRateLimitUnderASecondSpacesAttemptsByExactlyItsWindow() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        var target = Samples.webhook(url: server.url)
        target.limits = TargetLimits(concurrency: 4, rate: RateLimit(requests: 1, seconds: 0.5))
        let harness = try WorkerHarness(targets: [target])
        harness.worker.start()
        defer { harness.worker.stop() }
        try harness.enqueue([Samples.notification(device: "alice/phone"), Samples.notification(device: "bob/phone")], for: "hook")
        #expect(waitUntil { (try? harness.counts("hook").delivered) == 1 })
        harness.settle()
        #expect(server.requests.count == 1)
        harness.advance(by: 0.5)
        #expect(waitUntil { (try? harness.counts("hook").delivered) == 2 }, "the second attempt starts half a second after the first")
    }

    /// A worker started twice runs once (one poll, one pruning of the dead letters), and a
    /// stopped one starts no attempt, whatever wakes it.
    @Test func aWorkerStartedTwiceRunsOnceAndAStoppedOneStartsNothing() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let harness = try WorkerHarness(targets: [Samples.webhook(url: server.url)])
        harness.worker.start()
        _ = harness.worker.attemptsUnderWay  // the start has run on the worker's queue
        let waiting = harness.scheduler.pendingCount
        harness.worker.start()
        _ = harness.worker.attemptsUnderWay
        #expect(harness.scheduler.pendingCount == waiting, "no second poll")
        harness.worker.stop()
        try harness.enqueue([Samples.notification()], for: "hook")
        #expect(harness.worker.attemptsUnderWay == 0, "the wake's plan has run and started nothing")
        harness.advance(by: 60)
        #expect(server.requests.isEmpty)
        #expect(try harness.counts("hook").pending == 1)
    }

    @Test func aTargetThatAlwaysFailsEndsInTheDeadLettersAfterItsWindowReportedOnce() throws {
        let server = try TestHTTPServer { _ in .init(status: 500, body: "boom") }
        defer { server.stop() }
        var target = Samples.webhook(url: server.url)
        target.retryFor = 3600
        let harness = try WorkerHarness(targets: [target])
        harness.worker.start()
        defer { harness.worker.stop() }
        try harness.enqueue([Samples.notification()], for: "hook")
        #expect(waitUntil { server.requests.count == 1 })
        harness.settle()
        var advanced = 0.0
        while (try harness.counts("hook").dead) == 0, advanced < 7200 {
            harness.advance(by: 60)
            advanced += 60
        }
        // The last attempt is made at the window's end: the target's rest after the failure
        // before it (a back-off past the end) does not hold it back.
        #expect(advanced == 3600)
        let counts = try harness.counts("hook")
        #expect(counts.dead == 1 && counts.pending == 0 && counts.retrying == 0 && counts.delivered == 0)
        let attempts = server.requests.count
        #expect(counts.lastError == "HTTP 500: boom; gave up after \(attempts) attempts in 1h")
        let dead = harness.reports.filter { if case .deadLettered = $0 { true } else { false } }
        #expect(dead == [.deadLettered(target: "hook", device: "alice/phone", eventID: Samples.notification().eventID, reason: counts.lastError ?? "")])
        harness.advance(by: 7200)
        #expect(server.requests.count == attempts)
        #expect(try harness.queue.retryDeadLetters(target: "hook", at: harness.scheduler.now) == 1)
        harness.advance(by: 5)
        #expect(waitUntil { server.requests.count == attempts + 1 })
    }

    /// What no attempt can mend is dead-lettered at once, saying why, and never sent nor
    /// tried again: a delivery queued for a target the settings no longer name (taken out
    /// of the file and the bridge restarted), and a queued notification that is not the
    /// JSON the bridge writes (a damaged row). The target's other deliveries go on.
    @Test func whatNoAttemptCanMendIsDeadLetteredAtOnceSayingWhy() throws {
        let server = try TestHTTPServer { _ in .init(body: "{}") }
        defer { server.stop() }
        let harness = try WorkerHarness(targets: [Samples.webhook(url: server.url)])
        let gone = Samples.entry(target: "gone", Samples.notification(device: "bob/phone"))
        let damaged = DeliveryEntry(target: "hook", device: "carol/phone", eventID: "carol/phone/home/enter/1", payload: Array("{\"id\":".utf8))
        let fine = Samples.entry(target: "hook")
        _ = try harness.queue.enqueue([gone, damaged, fine], at: harness.scheduler.now)
        harness.worker.start()
        defer { harness.worker.stop() }
        #expect(waitUntil { (try? harness.counts("hook").delivered) == 1 })
        #expect(waitUntil { harness.reports.filter { if case .deadLettered = $0 { true } else { false } }.count == 2 })
        harness.settle()
        #expect(server.requests.count == 1, "only the readable notification for a known target was sent")
        let reasons = harness.reports.compactMap { report -> String? in
            guard case .deadLettered(_, _, let eventID, let reason) = report else { return nil }
            return "\(eventID): \(reason)"
        }
        #expect(Set(reasons) == [
            "\(gone.eventID): no target named \"gone\" in the settings",
            "carol/phone/home/enter/1: the queued notification is unreadable: the notification is not JSON: unexpected end of text, expected a JSON value",
        ], "\(reasons)")
        #expect(try harness.counts("gone").dead == 1 && harness.counts("hook").dead == 1)
        harness.advance(by: 86_400)
        #expect(server.requests.count == 1, "neither is tried again")
    }

    @Test func aFloodOfRefusedDeliveriesKeepsOnlyTheNewestDeadLetters() throws {
        let server = try TestHTTPServer { _ in .init(status: 400, body: "no such hook") }
        defer { server.stop() }
        var target = Samples.webhook(url: server.url)
        target.bound.maximumDeadLetters = 5
        let harness = try WorkerHarness(targets: [target])
        harness.worker.start()
        defer { harness.worker.stop() }
        let flood = (0..<30).map { Samples.notification(kind: $0 % 2 == 0 ? .enter : .exit, timestamp: Samples.now + Double($0)) }
        try harness.enqueue(flood, for: "hook")
        #expect(waitUntil { server.requests.count == flood.count })
        harness.settle()
        #expect(waitUntil { (try? harness.counts("hook").pending) == 0 })
        let counts = try harness.counts("hook")
        #expect(counts.dead == 5 && counts.pruned == 25)
        let pruned = harness.reports.reduce(0) { sum, report in
            if case .deadLettersPruned("hook", let count) = report { sum + count } else { sum }
        }
        #expect(pruned == 25)
        #expect(harness.reports.filter { if case .deadLettered = $0 { true } else { false } }.count == 30, "each dead letter reported")
        #expect(try harness.queue.retryDeadLetters(target: "hook", at: harness.scheduler.now) == 5)
        #expect(try harness.queue.heads().first?.entry.eventID == flood[25].eventID, "the newest five were kept")
    }

    /// Dead letters kept past a bound that came later (a database from before the bounds,
    /// or a `maximumDeadLetters` lowered since) are deleted when the worker starts, not at
    /// the target's next dead letter, which may never come.
    @Test func deadLettersPastALaterBoundAreDeletedAtTheStart() throws {
        var target = Samples.webhook(url: "http://127.0.0.1:9/hook")
        target.bound.maximumDeadLetters = 5
        let harness = try WorkerHarness(targets: [target])
        let buried = (0..<12).map { Samples.notification(device: "user\($0)/phone", kind: .enter, timestamp: Samples.now + Double($0)) }
        try harness.enqueue(buried, for: "hook")
        for (offset, row) in try harness.queue.heads().sorted(by: { $0.id < $1.id }).enumerated() {
            try harness.queue.moveToDeadLetters(row.id, reason: "HTTP 410: gone", at: Samples.now + Double(offset))
        }
        #expect(try harness.counts("hook").dead == 12)
        harness.worker.start()
        defer { harness.worker.stop() }
        #expect(waitUntil { (try? harness.counts("hook").dead) == 5 })
        #expect(try harness.counts("hook").pruned == 7)
        #expect(waitUntil { harness.reports.contains(.deadLettersPruned(target: "hook", count: 7)) })
        #expect(try harness.queue.retryDeadLetters(target: "hook", at: harness.scheduler.now) == 5)
        #expect(Set(try harness.queue.heads().map(\.entry.eventID)) == Set(buried.suffix(5).map(\.eventID)), "the newest five were kept")
    }

    @Test func aRetryAfterPastTheWindowGetsALastAttemptAtItsEnd() throws {
        let server = try TestHTTPServer { _ in .init(status: 503, headers: ["Retry-After": "3600000"], body: "") }
        defer { server.stop() }
        var target = Samples.webhook(url: server.url)
        target.retryFor = 3600
        let harness = try WorkerHarness(targets: [target])
        harness.worker.start()
        defer { harness.worker.stop() }
        try harness.enqueue([Samples.notification()], for: "hook")
        #expect(waitUntil { (try? harness.counts("hook").retrying) == 1 })
        harness.settle()
        #expect(try harness.queue.heads().first?.due == Samples.now + 3600)
        harness.advance(by: 3599)
        #expect(server.requests.count == 1)
        harness.advance(by: 1)
        #expect(waitUntil { (try? harness.counts("hook").dead) == 1 })
        #expect(server.requests.count == 2)
        #expect(try harness.counts("hook").lastError
            == "HTTP 503; gave up after 2 attempts in 1h: the target asked to wait 41d 16h, past the retry window")
    }

    @Test func anotherDeliverysRetryAfterDoesNotHoldALastAttemptPastItsWindow() throws {
        // Bob's notification fails throughout; Alice's, queued 100 s later, is answered
        // `429` with `Retry-After: 600` once, when Bob's window has 100 s left.
        let answered = Mutex<[String: Int]>([:])
        let server = try TestHTTPServer { request in
            let device = request.headers["idempotency-key"]?.hasPrefix("bob/") == true ? "bob" : "alice"
            let count = answered.withLock { answered in
                answered[device, default: 0] += 1
                return answered[device] ?? 0
            }
            switch (device, count) {
            case ("bob", 1): return .init(status: 503, headers: ["Retry-After": "3500"])
            case ("bob", _): return .init(status: 503)
            case (_, 1): return .init(status: 429, headers: ["Retry-After": "600"])
            default: return .init(body: "{}")
            }
        }
        defer { server.stop() }
        var target = Samples.webhook(url: server.url)
        target.retryFor = 3600
        let harness = try WorkerHarness(targets: [target])
        harness.worker.start()
        defer { harness.worker.stop() }
        try harness.enqueue(notifications("bob/phone", 1), for: "hook")
        #expect(waitUntil { (try? harness.counts("hook").retrying) == 1 })
        harness.advance(by: 100)
        try harness.enqueue(notifications("alice/phone", 1), for: "hook")
        // Both wait out Bob's `Retry-After`; then Bob's retry is due at 3515, inside his
        // window, and Alice's at the end of hers (3700): the target rests until then.
        harness.advance(by: 3400)
        #expect(server.requests.count == 3)
        #expect(try harness.queue.heads().map(\.due) == [Samples.now + 3515, Samples.now + 3700])
        // The rest holds Bob's retry, but no later than his window's end: his last attempt
        // is made there, as the schedule promised, and then he is dead-lettered.
        harness.advance(by: 99)
        #expect(server.requests.count == 3)
        harness.advance(by: 1)
        #expect(waitUntil { (try? harness.counts("hook").dead) == 1 })
        #expect(server.requests.count == 4)
        #expect(server.requests.last?.headers["idempotency-key"]?.hasPrefix("bob/") == true)
        #expect(try harness.counts("hook").lastError == "HTTP 503; gave up after 3 attempts in 1h")
        // Alice's retry, moved to the end of her window (3700), is made there and delivered.
        harness.advance(by: 99)
        #expect(server.requests.count == 4)
        harness.advance(by: 1)
        #expect(waitUntil { (try? harness.counts("hook").delivered) == 1 })
        #expect(server.requests.count == 5)
        #expect(server.requests.last?.headers["idempotency-key"]?.hasPrefix("alice/") == true)
    }

    @Test func aDeliveryDuringTheBackOffEndsTheRest() throws {
        // Bob's attempt fails while Alice's is under way, and the target rests for its
        // back-off; Carol's notification comes during the rest. Alice's attempt is then
        // delivered: the target is up, so Carol's goes now, the clock standing still.
        let release = DispatchSemaphore(value: 0)
        let server = try TestHTTPServer { request in
            let key = request.headers["idempotency-key"] ?? ""
            if key.hasPrefix("bob/") { return .init(status: 503) }
            if key.hasPrefix("alice/") { _ = release.wait(timeout: .now() + 10) }
            return .init(body: "{}")
        }
        defer { server.stop() }
        let harness = try WorkerHarness(targets: [Samples.webhook(url: server.url)])
        harness.worker.start()
        defer { harness.worker.stop() }
        try harness.enqueue(notifications("alice/phone", 1) + notifications("bob/phone", 1), for: "hook")
        // Both attempts started together, but Bob's may fail before Alice's request has
        // reached the server: wait for both.
        #expect(waitUntil { (try? harness.counts("hook").retrying) == 1 && server.requests.count == 2 })
        try harness.enqueue(notifications("carol/phone", 1), for: "hook")
        // The worker has planned after Carol's commit (`attemptsUnderWay` waits for its
        // queue) and started nothing: Alice's attempt is the only one under way.
        #expect(harness.worker.attemptsUnderWay == 1)
        #expect(server.requests.count == 2)
        release.signal()
        #expect(waitUntil { (try? harness.counts("hook").delivered) == 2 })
        #expect(server.requests.last?.headers["idempotency-key"]?.hasPrefix("carol/") == true)
    }

    @Test func aSlowTargetDoesNotDelayTheOthers() throws {
        let gate = DispatchSemaphore(value: 0)
        let slow = try TestHTTPServer { _ in
            _ = gate.wait(timeout: .now() + 10)
            return .init(body: "{}")
        }
        let fast = try TestHTTPServer()
        defer {
            slow.stop()
            fast.stop()
        }
        let harness = try WorkerHarness(targets: [Samples.webhook("slow", url: slow.url), Samples.webhook("fast", url: fast.url)])
        harness.worker.start()
        defer { harness.worker.stop() }
        let all = (1...5).flatMap { notifications("van/\($0)", 4) }
        try harness.enqueue(all, for: "slow")
        try harness.enqueue(all, for: "fast")
        #expect(waitUntil(timeout: 9) { (try? harness.counts("fast").delivered) == 20 })
        // The slow target's two attempts (its concurrency) started with the first plan;
        // their requests may still be on their way to it.
        #expect(waitUntil { slow.requests.count >= 2 })
        #expect(slow.requests.count == 2)
        #expect(try harness.counts("slow").delivered == 0)
        for _ in 0..<20 { gate.signal() }
        #expect(waitUntil { (try? harness.counts("slow").delivered) == 20 })
    }

    @Test func afterACrashOnlyUnacknowledgedDeliveriesAreSentAgainWithTheSameKey() throws {
        let holdSecond = Atomic(true)
        let gate = DispatchSemaphore(value: 0)
        let events = notifications("alice/phone", 3)
        let server = try TestHTTPServer { request in
            if request.headers["idempotency-key"] == events[1].eventID, holdSecond.load(ordering: .relaxed) {
                _ = gate.wait(timeout: .now() + 30)
            }
            return .init(body: "{}")
        }
        defer {
            gate.signal()
            server.stop()
        }
        let first = try WorkerHarness(targets: [Samples.webhook(url: server.url)])
        first.worker.start()
        try first.enqueue(events, for: "hook")
        #expect(waitUntil { server.requests.count == 2 })
        // The process dies with the second delivery under way: nothing more is recorded.
        first.worker.stop()
        holdSecond.store(false, ordering: .relaxed)

        let second = try WorkerHarness(targets: [Samples.webhook(url: server.url)], directory: first.directory)
        second.worker.start()
        defer { second.worker.stop() }
        #expect(waitUntil { (try? second.queue.heads().isEmpty) == true && second.worker.attemptsUnderWay == 0 })
        let keys = server.requests.compactMap { $0.headers["idempotency-key"] }
        #expect(keys == [events[0].eventID, events[1].eventID, events[1].eventID, events[2].eventID])
        #expect(Set(keys) == Set(events.map(\.eventID)))
    }
}
