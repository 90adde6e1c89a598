#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The state directory made ready before the database opens in it: created with its
/// parents when missing, and checked to be a writable directory, with the system's own
/// reason when it cannot be (`mkdir /proc/nope: No such file or directory`), not
/// Foundation's "The operation could not be completed."
package enum StateDirectory {
    /// Creates `path` and its missing parents (mode 0700: device positions are personal
    /// data) and checks that it is a directory this process can write.
    package static func prepare(_ path: String) throws(StoreError) {
        let operation = "use state directory \(path)"
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                throw StoreError(operation, "mkdir \(prefix): \(String(cString: strerror(errno)))")
            }
        }
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw StoreError(operation, String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw StoreError(operation, "it exists and is not a directory")
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw StoreError(operation, "not writable by this user (uid \(getuid())): \(String(cString: strerror(errno)))")
        }
    }
}
