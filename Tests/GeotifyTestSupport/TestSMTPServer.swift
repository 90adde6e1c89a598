import Foundation

/// An SMTP server on 127.0.0.1 for tests of e-mail delivery: aiosmtpd (from PyPI, in the
/// tests' Python) running Scripts/smtp_sink.py, which stores every message it accepts.
/// Optionally TLS (STARTTLS required, or TLS from the first byte) and a required login.
package final class TestSMTPServer {
    /// How the server protects the connection.
    package enum Security: String {
        case none
        case startTLS = "starttls"
        case implicitTLS = "implicit"
    }

    /// A message the server accepted.
    package struct Message: Sendable {
        package var from: String
        package var to: [String]
        /// Whether the session was encrypted when the message came.
        package var tls: Bool
        /// The user name the client logged in with, if it did.
        package var login: String?
        /// The message as sent (RFC 5322, CRLF line ends).
        package var data: [UInt8]
    }

    package let port: Int
    private let directory: URL
    private let process: ChildProcess

    /// Starts a server; `certificates` are required for TLS, `login` is `user:password`.
    package init(security: Security = .none, certificates: TestCertificates? = nil, login: String? = nil) throws {
        let directory = try makeTemporaryDirectory("smtp")
        self.directory = directory
        var arguments = [testSupportScript("smtp_sink.py"), "--directory", directory.path, "--tls", security.rawValue]
        if let certificates { arguments += ["--cert", certificates.certFile, "--key", certificates.keyFile] }
        if let login { arguments += ["--login", login] }
        let logFile = directory.appendingPathComponent("server.log")
        let logged = { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
        var lastError: Error?
        for _ in 0..<5 {
            let port = try freePort()
            let process = try ChildProcess(
                executable: testPython, arguments: arguments + ["--port", String(port)], outputFile: logFile)
            // Its own line, not only a listener on the port: another test's server may
            // hold that port until this one fails to bind it (an e-mail test once talked
            // to another server while this one was still starting).
            let listening = "listening on 127.0.0.1:\(port)\n"
            if waitUntil(timeout: 20, { logged().contains(listening) || !process.isRunning }), process.isRunning {
                self.port = port
                self.process = process
                return
            }
            process.terminate(signal: SIGKILL)
            lastError = TestSupportError("the SMTP sink did not start: \(logged())")
        }
        throw lastError ?? TestSupportError("the SMTP sink did not start")
    }

    deinit {
        process.terminate(signal: SIGKILL)
        _ = process.waitForExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The messages accepted so far, in order.
    package var messages: [Message] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let encoded = object["data"] as? String, let bytes = Data(base64Encoded: encoded)
            else { return nil }
            return Message(
                from: object["from"] as? String ?? "", to: object["to"] as? [String] ?? [], tls: object["tls"] as? Bool ?? false,
                login: object["login"] as? String, data: Array(bytes))
        }
    }

    /// What the server wrote to its log, for failure messages.
    package var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }
}
