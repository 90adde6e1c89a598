import Foundation

/// A new, empty directory under the system's temporary directory for one test, named
/// `geotify-<name>-<uuid>` so leftovers say where they came from.
package func makeTemporaryDirectory(_ name: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("geotify-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}
