/// At most `requests` attempts started in any window of `seconds`: a service's published
/// limit (ntfy.sh, Telegram's 30 a second), or one's own receiver's.
package struct RateLimit: Sendable, Equatable {
    package var requests: Int
    package var seconds: Double

    package init(requests: Int, seconds: Double) {
        self.requests = requests
        self.seconds = seconds
    }
}
