import Foundation
import GeotifyTestSupport

/// Points the descriptors this process holds on the file at `path` at the same file
/// opened anew with `flags`: with `O_RDONLY` their writes fail (EBADF), as on a failing
/// disk; with `O_RDWR` they work again.
func reopen(_ path: String, flags: Int32) throws {
    let file = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int32.init).filter {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == file
    }
    guard !held.isEmpty else { throw TestSupportError("no descriptor is open on \(file)") }
    let fresh = open(file, flags | O_CLOEXEC)
    guard fresh >= 0 else { throw TestSupportError("open \(file): \(String(cString: strerror(errno)))") }
    for descriptor in held where dup2(fresh, descriptor) < 0 {
        throw TestSupportError("dup2: \(String(cString: strerror(errno)))")
    }
    close(fresh)
}
