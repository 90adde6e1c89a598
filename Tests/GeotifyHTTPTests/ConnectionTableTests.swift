import GeotifyHTTP
import Testing

@Suite struct ConnectionTableTests {
    @Test func aConnectionThatSendsNoHeaderInTimeIsOverdueOnceAndAnswered() {
        var table = ConnectionTable()
        table.opened(1, socket: 10, at: 0)
        table.opened(2, socket: 11, at: 5)
        let early = table.overdue(at: 10, timeout: 10)
        let due = table.overdue(at: 10.5, timeout: 10)
        let again = table.overdue(at: 11, timeout: 10)
        let late = table.requestStarted(1)
        #expect(early.isEmpty)
        #expect(due == [ConnectionTable.Overdue(id: 1, socket: 10, answer: true)])
        #expect(again.isEmpty, "reported once")
        #expect(!late, "a header arriving after the deadline is refused")
    }

    @Test func aConnectionHandlingARequestIsNotOverdue() {
        var table = ConnectionTable()
        table.opened(1, socket: 10, at: 0)
        let started = table.requestStarted(1)
        table.requestReceived(1)
        let overdue = table.overdue(at: 100, timeout: 10)
        #expect(started)
        #expect(overdue.isEmpty)
    }

    /// The deadline covers the body too: a client that sends its header and then its body
    /// a byte at a time is answered 408 and closed like one that is slow with its header.
    @Test func aRequestWhoseBodyDoesNotArriveInTimeIsOverdueAndAnswered() {
        var table = ConnectionTable()
        table.opened(1, socket: 10, at: 0)
        _ = table.requestStarted(1)
        let early = table.overdue(at: 10, timeout: 10)
        let due = table.overdue(at: 10.5, timeout: 10)
        #expect(early.isEmpty)
        #expect(due == [ConnectionTable.Overdue(id: 1, socket: 10, answer: true, receiving: true)])
    }

    /// A keep-alive connection (id 1, socket 10, opened at 0) whose first request was
    /// answered at 2.
    func afterOneRequest() -> ConnectionTable {
        var table = ConnectionTable()
        table.opened(1, socket: 10, at: 0)
        _ = table.requestStarted(1)
        table.requestReceived(1)
        table.requestEnded(1, at: 2)
        return table
    }

    @Test func anIdleKeepAliveConnectionIsClosedWithoutAnAnswer() {
        var table = afterOneRequest()
        let overdue = table.overdue(at: 12.5, timeout: 10)
        #expect(overdue == [ConnectionTable.Overdue(id: 1, socket: 10, answer: false)])
    }

    @Test func closedConnectionsLeaveTheTable() {
        var table = ConnectionTable()
        table.opened(1, socket: 10, at: 0)
        #expect(table.count == 1)
        table.closed(1)
        let overdue = table.overdue(at: 100, timeout: 10)
        #expect(table.count == 0)
        #expect(overdue.isEmpty)
    }

    /// A keep-alive connection whose next request's header came and whose body does not
    /// come in time is answered 408, as the first request would be: only an idle one is
    /// closed without an answer.
    @Test func aLaterRequestWhoseBodyDoesNotArriveInTimeIsAnswered() {
        var table = afterOneRequest()
        let started = table.requestStarted(1)
        let overdue = table.overdue(at: 12.5, timeout: 10)
        #expect(started)
        #expect(overdue == [ConnectionTable.Overdue(id: 1, socket: 10, answer: true, receiving: true)])
    }
}
