import Foundation
import GeotifyTestSupport

/// Runs the built `geotify` executable to completion (at most 60 s) in `directory` and
/// returns its exit status, standard output and standard error.
func runGeotify(_ arguments: [String], in directory: URL) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    let output = Pipe()
    let error = Pipe()
    process.executableURL = geotifyExecutable
    process.arguments = arguments
    process.currentDirectoryURL = directory
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = error.fileHandleForReading.readDataToEndOfFile()
    guard waitUntil(timeout: 60, { !process.isRunning }) else {
        process.terminate()
        throw TestSupportError("geotify \(arguments.joined(separator: " ")) did not finish")
    }
    return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
}

/// The `geotify` executable beside the test bundle.
let geotifyExecutable = productsDirectory.appendingPathComponent("geotify")
