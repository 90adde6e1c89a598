import Foundation

/// A throwaway certificate authority and a broker certificate it signed for 127.0.0.1
/// (made with the `openssl` command), for tests of TLS connections (mqtts://).
package struct TestCertificates: Sendable {
    /// The CA certificate (PEM) clients trust.
    package let caFile: String
    /// The broker's certificate (PEM), valid for IP 127.0.0.1 and host localhost.
    package let certFile: String
    /// The broker's private key (PEM).
    package let keyFile: String

    /// Makes the CA and broker certificate in `directory` (created if needed).
    package init(in directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        caFile = path("ca.crt")
        certFile = path("server.crt")
        keyFile = path("server.key")
        let extensions = path("server.ext")
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
            toFile: extensions, atomically: true, encoding: .utf8
        )
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Self.openssl(["req", "-x509"] + curve + [
            "-keyout", path("ca.key"), "-out", caFile, "-days", "2", "-subj", "/CN=Geotify Test CA",
        ])
        try Self.openssl(["req"] + curve + [
            "-keyout", keyFile, "-out", path("server.csr"), "-subj", "/CN=127.0.0.1",
        ])
        try Self.openssl([
            "x509", "-req", "-in", path("server.csr"), "-CA", caFile, "-CAkey", path("ca.key"),
            "-CAcreateserial", "-out", certFile, "-days", "2", "-extfile", extensions,
        ])
    }

    /// The mosquitto listener options that turn the test broker's listener into TLS, for
    /// `TestBroker(extraConfig:)`.
    package var brokerConfig: String {
        "cafile \(caFile)\ncertfile \(certFile)\nkeyfile \(keyFile)\n"
    }

    private static func openssl(_ arguments: [String]) throws {
        try runCommand("openssl", arguments)
    }
}
