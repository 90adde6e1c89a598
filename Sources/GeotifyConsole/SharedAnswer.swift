import GeotifyCore
import GeotifyHTTP
import Synchronization

/// An answer rendered from the fence book, as last rendered, for the requests of the same
/// edition of the book that come while it is still being sent: the fence list
/// (`Console.fenceList(for:)`), which every open page fetches at once after a change, and
/// which for a large book is megabytes (20 000 fences, 2.2 MB in about 10 ms). Rendering
/// it once and sending that one body to all of them saves the time and holds the bytes
/// once. `UnsentAnswers` counts such a shared body once per user.
///
/// Only a weak reference is kept: the body lives while a response holds it (until
/// libmicrohttpd has sent it) and the next request after that renders it anew, so the
/// console keeps no copy of a large list between changes. The edition of the book
/// (`FenceBookEdition`) tells whether a body is still the list in force.
package final class SharedAnswer: Sendable {
    /// The body last rendered and the edition of the book it was rendered from.
    private struct Rendered {
        let edition: FenceBookEdition
        weak var body: HeldBody?
    }

    private let rendered = Mutex<Rendered?>(nil)

    package init() {}

    /// The body last rendered from `edition`, when a response still holds it.
    package func body(of edition: FenceBookEdition) -> HeldBody? {
        rendered.withLock { rendered in
            guard let rendered, rendered.edition.isSame(as: edition) else { return nil }
            return rendered.body
        }
    }

    /// Keeps `body`, rendered from `edition`, for the next requests of that edition.
    package func keep(_ body: HeldBody, of edition: FenceBookEdition) {
        rendered.withLock { $0 = Rendered(edition: edition, body: body) }
    }
}
