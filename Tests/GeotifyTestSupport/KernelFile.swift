import Foundation

/// The whole text of a file that the kernel writes as it is read (`/proc`), or nil when
/// it cannot be read. Foundation's `String(contentsOfFile:)` and `Data(contentsOf:)` read
/// such a file, whose size is 0, with one read(2), which the kernel answers with one page:
/// /proc/locks was cut at its 4 072nd byte, about 75 locks, so under the whole suite (the
/// brokers' and state stores' locks) the line of a lock a test waited for was often past
/// the end. A `FileHandle` reads on to the end.
package func kernelFileText(_ path: String) -> String? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    do {
        return String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    } catch {
        return nil
    }
}
