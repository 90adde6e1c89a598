import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Makes room for `count` open files in the test process, for the tests that open a
/// thousand connections at once with both ends in it: raises the soft limit on open
/// files (1 024 for an ordinary user) up to `count`, within the hard limit. Throws, naming
/// both, when the hard limit is lower: the test cannot run here, rather than fail on
/// "Too many open files" halfway through.
package func makeRoomForOpenFiles(_ count: Int) throws {
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    var limits = rlimit()
    guard getrlimit(resource, &limits) == 0 else { throw TestSupportError("cannot read the limit of open files: \(String(cString: strerror(errno)))") }
    let wanted = rlim_t(count)
    guard limits.rlim_cur < wanted else { return }
    guard limits.rlim_max >= wanted else {
        throw TestSupportError("the test needs \(count) open files; the hard limit is \(limits.rlim_max) (raise it: ulimit -Hn)")
    }
    limits.rlim_cur = wanted
    guard setrlimit(resource, &limits) == 0 else { throw TestSupportError("cannot raise the limit of open files to \(count): \(String(cString: strerror(errno)))") }
}
