import Foundation

/// Runs a command found on PATH to completion and returns its standard output and
/// error; throws with that output when it fails. For the tools tests drive: openssl,
/// mosquitto_passwd, sqlite3, prlimit.
@discardableResult
package func runCommand(_ command: String, _ arguments: [String]) throws -> String {
    let run = try CompletedProcess.run(command, arguments, mergingError: true)
    guard run.status == 0 else {
        throw TestSupportError("\(command) \(arguments.joined(separator: " ")) failed: \(run.output)")
    }
    return run.output
}
