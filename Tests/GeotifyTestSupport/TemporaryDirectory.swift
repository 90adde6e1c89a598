import Foundation

/// The directory every `makeTemporaryDirectory` of this test process is made in,
/// `geotify-tests-<pid>` under the system's temporary directory, removed with all it holds
/// when the process exits (a run of the suite made about 180 directories and left them
/// all). A process that crashes leaves it, named by its process id.
private let temporaryRoot: URL = {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("geotify-tests-\(getpid())")
    try? FileManager.default.removeItem(at: root)
    atexit {
        try? FileManager.default.removeItem(at: temporaryRoot)
    }
    return root
}()

/// A new, empty directory for one test, named `geotify-<name>-<uuid>` (so a process that
/// crashed leaves directories that say where they came from) in the process's own
/// temporary directory, which goes when the process exits.
package func makeTemporaryDirectory(_ name: String) throws -> URL {
    let directory = temporaryRoot.appendingPathComponent("geotify-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// `makeTemporaryDirectory(name)`'s path, for a helper that cannot throw (one with a
/// typed `throws`); a directory that cannot be made stops the tests.
package func temporaryDirectoryPath(_ name: String) -> String {
    do {
        return try makeTemporaryDirectory(name).path
    } catch {
        preconditionFailure("cannot make a temporary directory for \(name): \(error)")
    }
}
