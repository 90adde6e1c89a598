import Foundation

/// A program run to its end: how it ended and what it wrote.
///
/// Why not Foundation's `Process`: on Linux its `run()` copies each `/proc/self/fd` entry's
/// whole 256-byte name field, past the end of glibc's read buffer when the entry sits at
/// its tail and the next page is unmapped, and crashes the process now and then
/// (swift-corelibs-foundation pull request 5472; it crashed the test process once in
/// about 50 runs of the suite with the cores busy). `ChildProcess` starts programs with
/// `posix_spawn` and reads nothing of the kind.
package struct CompletedProcess: Sendable {
    /// The exit code; 128 plus the signal's number when a signal ended the program.
    package var status: Int32
    /// Its standard output (with its standard error too, when run `mergingError`).
    package var output: String
    /// Its standard error; empty when run `mergingError`.
    package var error: String

    /// Runs `executable` (a path, or a name looked up on PATH) with `arguments` in
    /// `directory` (the test process's when nil), with `environment` instead of the test
    /// process's when given, and waits for it (killing it after `timeout` seconds, then
    /// throwing). Its output is collected in files of a temporary directory, so a program
    /// that writes much never blocks on a full pipe.
    package static func run(
        _ executable: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
        mergingError: Bool = false, timeout: Double = 60
    ) throws -> CompletedProcess {
        let capture = try makeTemporaryDirectory("output")
        defer { try? FileManager.default.removeItem(at: capture) }
        let outputFile = capture.appendingPathComponent("output")
        let errorFile = capture.appendingPathComponent("error")
        let child = try ChildProcess(
            executable: executable, arguments: arguments, environment: environment, outputFile: outputFile,
            errorFile: mergingError ? nil : errorFile, directory: directory)
        guard child.waitForExit(timeout: timeout) else {
            child.terminate(signal: SIGKILL)
            _ = child.waitForExit(timeout: 10)
            throw TestSupportError("\(executable) \(arguments.joined(separator: " ")) did not finish within \(Int(timeout)) s")
        }
        func text(_ file: URL) -> String { (try? Data(contentsOf: file)).map { String(decoding: $0, as: UTF8.self) } ?? "" }
        return CompletedProcess(
            status: child.exitCode ?? child.terminationSignal.map { 128 + $0 } ?? -1, output: text(outputFile), error: text(errorFile))
    }
}
