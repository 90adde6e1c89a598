import Foundation

/// Runs a command found on PATH to completion and returns its standard output and
/// error; throws with that output when it fails. For the tools tests drive: openssl,
/// mosquitto_passwd, sqlite3, prlimit.
@discardableResult
package func runCommand(_ command: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [command] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw TestSupportError("\(command) \(arguments.joined(separator: " ")) failed: \(text)")
    }
    return text
}
