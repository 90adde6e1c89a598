#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open files, which the server's connections use up: each takes
/// a descriptor (up to `maximumConnections`, and as many again answered 503), beside
/// the broker's, the state store's and the fence files'. The soft limit an ordinary user
/// or a systemd service starts with is 1 024, which a thousand connections at once use
/// up (each further one fails to be accepted), while the hard limit is far higher
/// (systemd gives 524 288, and asks programs that need more to raise the soft limit
/// themselves). `geotify run` raises it first thing; so do the tests that hold both ends
/// of a thousand connections.
package enum OpenFileLimit {
    /// The soft and hard limits now; nil when they cannot be read.
    package static var current: (soft: rlim_t, hard: rlim_t)? {
        var limits = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return nil }
        return (limits.rlim_cur, limits.rlim_max)
    }

    /// Raises the soft limit to the hard limit; the soft limit before and after, or nil
    /// when it was already the hard one or could not be read or set.
    @discardableResult
    package static func raiseToHard() -> (before: rlim_t, after: rlim_t)? {
        guard let (soft, hard) = current, soft < hard else { return nil }
        var limits = rlimit(rlim_cur: hard, rlim_max: hard)
        guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return nil }
        return (soft, hard)
    }
}
