import Foundation
import GeotifyTestSupport

/// Runs the built `geotify` executable to completion (at most 60 s) in `directory` and
/// returns its exit status, standard output and standard error.
func runGeotify(_ arguments: [String], in directory: URL) throws -> (status: Int32, output: String, error: String) {
    let run = try CompletedProcess.run(geotifyExecutable.path, arguments, in: directory)
    return (run.status, run.output, run.error)
}

/// The `geotify` executable beside the test bundle.
let geotifyExecutable = productsDirectory.appendingPathComponent("geotify")
