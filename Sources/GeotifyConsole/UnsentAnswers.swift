import GeotifyHTTP
import Synchronization

/// How many large answers (the whole state, the fence list, the devices, the GeoJSON
/// export, a live stream's opening state) each user has that are not yet sent whole,
/// bounded per user.
///
/// Each such answer is rendered for its request and held until its client has read it
/// (or its connection closes): a client that asks and does not read holds a copy of the
/// state per request, about 2 MB for a large fence book, on every connection it opens.
/// So a user may have at most `maximumPerUser` of them at once; past that the request is
/// refused (429 `too_many_unread`) before anything is rendered. The count is kept by a
/// `Lease` the response carries (`HTTPResponse.lease`): the server lets go of a response
/// when it has been sent whole or its connection closed, and the lease gives its slot
/// back then; a live stream holds it in its subscription until the opening state has been
/// taken whole or the stream closed (`EventSubscription.open(_:holding:)`). Users are
/// told apart by login name (without logins, everyone is one).
///
/// An answer rendered once and sent to several requests (`SharedAnswer`: the fence list
/// every open page fetches after a change) is held once however many of them wait, so it
/// counts once: a user's requests that share a body another of its unsent answers holds
/// take no slot of their own (`lease(for:sharing:)`), and the body's slot comes back when
/// the last of them is let go. Without this, a sixth page of one user (one user, without
/// logins, is every page) was refused the list after each change and fetched it 5 s later.
package final class UnsentAnswers: Sendable {
    /// One answer's slot, or a share of the slot of a body several answers hold; given
    /// back when the response holding it is let go. A share keeps its body, so the body's
    /// identity names no other body while the share is counted.
    package final class Lease: Sendable {
        private let answers: UnsentAnswers
        private let user: String
        private let body: HeldBody?

        fileprivate init(answers: UnsentAnswers, user: String, body: HeldBody?) {
            self.answers = answers
            self.user = user
            self.body = body
        }

        deinit {
            answers.giveBack(user, body: body.map(ObjectIdentifier.init))
        }
    }

    /// Per user: how many slots are taken, and how many leases share each body that holds one.
    private struct Held: Sendable {
        var slots = 0
        var shares: [ObjectIdentifier: Int] = [:]
    }

    package let maximumPerUser: Int
    private let held = Mutex<[String: Held]>([:])

    package init(maximumPerUser: Int) {
        self.maximumPerUser = maximumPerUser
    }

    /// `render`'s response, carrying a slot of `user`'s; 429 `too_many_unread` when the
    /// user has `maximumPerUser` answers unsent already.
    package func answer(for user: HTTPUser, _ render: () -> HTTPResponse) -> HTTPResponse {
        guard let lease = lease(for: user) else { return refusal(for: user) }
        var response = render()
        response.lease = lease
        return response
    }

    /// One of `user`'s slots, given back when the lease is let go; nil when the user has
    /// `maximumPerUser` answers unsent already (answer `refusal(for:)` then).
    package func lease(for user: HTTPUser) -> Lease? {
        lease(for: user, sharing: nil)
    }

    /// Whether `user` has a slot free now: asked before an answer is rendered, so a user
    /// at its bound costs no rendering (`lease(for:sharing:)` decides).
    package func hasRoom(for user: HTTPUser) -> Bool {
        held.withLock { ($0[user.name ?? ""]?.slots ?? 0) < maximumPerUser }
    }

    /// A lease for an answer whose body is `body`, shared with other answers: a share of
    /// the slot `user`'s unsent answers of the same body hold, or a slot of its own when
    /// none does; nil when that needs a slot and the user has `maximumPerUser` answers
    /// unsent already.
    package func lease(for user: HTTPUser, sharing body: HeldBody?) -> Lease? {
        let name = user.name ?? ""
        let key = body.map(ObjectIdentifier.init)
        let taken = held.withLock { held -> Bool in
            var mine = held[name] ?? Held()
            if let key, let shares = mine.shares[key] {
                mine.shares[key] = shares + 1
            } else {
                guard mine.slots < maximumPerUser else { return false }
                mine.slots += 1
                if let key { mine.shares[key] = 1 }
            }
            held[name] = mine
            return true
        }
        return taken ? Lease(answers: self, user: name, body: body) : nil
    }

    /// 429 `too_many_unread` with `Retry-After`: `user` has `maximumPerUser` answers unsent.
    package func refusal(for user: HTTPUser) -> HTTPResponse {
        var refusal = HTTPResponse.refusal(
            .tooManyUnread,
            "\(maximumPerUser) large answers (or live streams' opening states) to \(user.name.map { "user \"\($0)\"" } ?? "this console's clients") are still being sent; read them before asking again")
        refusal.headers["Retry-After"] = "5"
        return refusal
    }

    /// How many slots `user` (a login name; "" without logins) holds: its unsent answers,
    /// those that share a body counted once.
    package func unsent(_ user: String) -> Int {
        held.withLock { $0[user]?.slots ?? 0 }
    }

    private func giveBack(_ user: String, body key: ObjectIdentifier?) {
        held.withLock { held in
            guard var mine = held[user] else {
                assertionFailure("a lease of \(user) given back with no slot held")
                return
            }
            if let key, let shares = mine.shares[key] {
                mine.shares[key] = shares > 1 ? shares - 1 : nil
                if shares == 1 { mine.slots -= 1 }
            } else {
                mine.slots -= 1
            }
            held[user] = mine.slots > 0 ? mine : nil
        }
    }
}
