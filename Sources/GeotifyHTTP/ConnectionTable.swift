/// The server's open connections and how long each has been waiting for a request to
/// arrive whole: the defence against slowloris clients, which open connections and send
/// their header, or their body, a byte at a time to hold them.
///
/// A connection waits from when it opens, and again from when each response completes
/// (keep-alive); it stops waiting once the request has arrived whole, header and body
/// (or was answered on its header alone). One that waits longer than the timeout is
/// overdue: the server answers 408 (when it never sent a request, or is in the middle
/// of one) and shuts its socket. A value, so the rule is tested without sockets.
package struct ConnectionTable: Sendable {
    /// One open connection.
    package struct Entry: Sendable, Equatable {
        /// The socket, to shut when overdue.
        package var socket: Int32
        /// Since when (monotonic seconds) it waits for a request to arrive whole; nil
        /// while a request is handled.
        package var waitingSince: Double?
        /// Whether it has sent a request before (an idle keep-alive connection is closed
        /// without a 408).
        package var served: Bool
        /// Whether a request's header has arrived and its body is still arriving.
        package var receiving: Bool
        /// Whether it was found overdue (its next header, if any arrives, is refused).
        package var overdue: Bool
    }

    /// A connection found overdue.
    package struct Overdue: Sendable, Equatable {
        package var id: UInt
        package var socket: Int32
        /// Whether to answer 408 before closing (it never sent a request, or is sending one).
        package var answer: Bool
        /// Whether the request's header had arrived and its body had not.
        package var receiving: Bool

        package init(id: UInt, socket: Int32, answer: Bool, receiving: Bool = false) {
            self.id = id
            self.socket = socket
            self.answer = answer
            self.receiving = receiving
        }
    }

    package private(set) var entries: [UInt: Entry] = [:]

    package init() {}

    /// How many connections are open.
    package var count: Int { entries.count }

    /// A connection opened at `now`.
    package mutating func opened(_ id: UInt, socket: Int32, at now: Double) {
        entries[id] = Entry(socket: socket, waitingSince: now, served: false, receiving: false, overdue: false)
    }

    /// A request's header arrived (its body may follow, within the same deadline); false
    /// when the connection was already found overdue (the request is then refused, since
    /// its socket is being shut).
    package mutating func requestStarted(_ id: UInt) -> Bool {
        guard var entry = entries[id] else { return true }
        guard !entry.overdue else { return false }
        entry.receiving = true
        entries[id] = entry
        return true
    }

    /// The request arrived whole (or was answered on its header): the connection no
    /// longer waits while it is handled.
    package mutating func requestReceived(_ id: UInt) {
        guard var entry = entries[id], !entry.overdue else { return }
        entry.waitingSince = nil
        entry.receiving = false
        entries[id] = entry
    }

    /// A response completed at `now`; the connection may wait for another request.
    package mutating func requestEnded(_ id: UInt, at now: Double) {
        guard var entry = entries[id], !entry.overdue else { return }
        entry.waitingSince = now
        entry.served = true
        entry.receiving = false
        entries[id] = entry
    }

    /// The connection closed.
    package mutating func closed(_ id: UInt) {
        entries[id] = nil
    }

    /// The connections that have waited more than `timeout` seconds for a request to
    /// arrive whole at `now`, marked overdue so each is reported once.
    package mutating func overdue(at now: Double, timeout: Double) -> [Overdue] {
        var found: [Overdue] = []
        for (id, entry) in entries where !entry.overdue {
            guard let since = entry.waitingSince, now - since > timeout else { continue }
            entries[id]?.overdue = true
            found.append(Overdue(id: id, socket: entry.socket, answer: !entry.served || entry.receiving, receiving: entry.receiving))
        }
        return found.sorted { $0.id < $1.id }
    }
}
