import Foundation

/// A test of `geotify fences` in a temporary directory that holds its fence file: writing
/// and reading files there, and running the command on `fences.json` (or `file`).
protocol FencesCommandFixture {
    /// The directory the command runs in.
    var directory: URL { get }
}

extension FencesCommandFixture {
    func write(_ text: String, to name: String) throws {
        try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func read(_ name: String = "fences.json") throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    func fences(_ arguments: String..., file: String = "fences.json") throws -> (status: Int32, output: String, error: String) {
        try runGeotify(["fences"] + arguments + ["--fences", file], in: directory)
    }
}
