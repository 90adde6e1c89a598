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
package final class UnsentAnswers: Sendable {
    /// One answer's slot; given back when the response holding it is let go.
    package final class Lease: Sendable {
        private let answers: UnsentAnswers
        private let user: String

        fileprivate init(answers: UnsentAnswers, user: String) {
            self.answers = answers
            self.user = user
        }

        deinit {
            answers.giveBack(user)
        }
    }

    package let maximumPerUser: Int
    private let counts = Mutex<[String: Int]>([:])

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
        let name = user.name ?? ""
        let taken = counts.withLock { counts -> Bool in
            guard counts[name, default: 0] < maximumPerUser else { return false }
            counts[name, default: 0] += 1
            return true
        }
        return taken ? Lease(answers: self, user: name) : nil
    }

    /// 429 `too_many_unread` with `Retry-After`: `user` has `maximumPerUser` answers unsent.
    package func refusal(for user: HTTPUser) -> HTTPResponse {
        var refusal = HTTPResponse.refusal(
            .tooManyUnread,
            "\(maximumPerUser) large answers (or live streams' opening states) to \(user.name.map { "user \"\($0)\"" } ?? "this console's clients") are still being sent; read them before asking again")
        refusal.headers["Retry-After"] = "5"
        return refusal
    }

    /// How many answers `user` (a login name; "" without logins) has unsent.
    package func unsent(_ user: String) -> Int {
        counts.withLock { $0[user] ?? 0 }
    }

    private func giveBack(_ user: String) {
        counts.withLock { counts in
            let left = counts[user, default: 1] - 1
            counts[user] = left > 0 ? left : nil
        }
    }
}
