#if canImport(Glibc)
import Glibc
#endif

/// The limit on open files `geotify run` gives itself: the soft limit raised to the hard
/// one, first thing. The web console's connections (up to `maximumConnections`, and as
/// many again answered 503), the broker's, the state store's and the fence files' all
/// take descriptors, and the soft limit an ordinary user or a systemd service starts with
/// is 1 024, which a thousand connections at once use up (each further one fails to be
/// accepted), while the hard limit is far higher (systemd gives 524 288 and asks programs
/// that need more to raise the soft limit themselves).
enum OpenFileLimit {
    /// The soft limit to set for the limits `soft` and `hard`: the hard one, or nil when
    /// the soft one is already as high.
    static func raised(soft: rlim_t, hard: rlim_t) -> rlim_t? {
        soft < hard ? hard : nil
    }

    /// Raises the process's soft limit to its hard limit; the soft limit before and
    /// after, or nil when it was already the hard one or could not be read or set.
    static func raise() -> (before: rlim_t, after: rlim_t)? {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limits = rlimit()
        guard getrlimit(resource, &limits) == 0, let soft = raised(soft: limits.rlim_cur, hard: limits.rlim_max) else { return nil }
        let before = limits.rlim_cur
        limits.rlim_cur = soft
        guard setrlimit(resource, &limits) == 0 else { return nil }
        return (before, soft)
    }
}
