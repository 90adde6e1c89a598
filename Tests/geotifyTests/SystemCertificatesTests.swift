import Foundation
import GeotifyTestSupport
import Testing

/// A bridge whose broker is `mqtts://` with no `tls.caFile` trusts the system's CAs, and
/// keeps reconnecting to it: libmosquitto 2.0.11 honoured its system-CA option on the
/// first connection only and failed every reconnection, which `MQTTClient` works around.
///
/// Why a `geotify run` process: OpenSSL's default trust store reads `SSL_CERT_FILE`, and
/// pointing it at the test CA takes an environment of its own. Set in the test process
/// (as this test once did), it held for every test running beside it (one expects the
/// system's CAs to refuse the test CA's broker), and `setenv` is not safe while other
/// threads read the environment, as the programs tests start do.
@Suite("TLS with the system's CAs", .serialized, .waiting)
struct SystemCertificatesTests {
    @Test func aBridgeTrustingTheSystemsCAsReconnectsAfterTheBrokerRestarts() throws {
        let directory = try makeTemporaryDirectory("system-cas")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try TestCertificates(in: directory)
        let broker = try TestBroker(extraConfig: certificates.brokerConfig)
        let fences = directory.appendingPathComponent("fences.json")
        try #"{"devices": {}}"#.write(to: fences, atomically: true, encoding: .utf8)
        let bridge = try BridgeProcess(name: "systemcas", port: broker.port, tls: true, fences: fences, directory: directory)
        var environment = ProcessInfo.processInfo.environment
        environment["SSL_CERT_FILE"] = certificates.caFile
        try bridge.start(environment: environment)
        defer { bridge.kill(SIGTERM) }
        func connections() -> Int { bridge.log.components(separatedBy: "connected to mqtts://127.0.0.1:\(broker.port)").count - 1 }
        #expect(waitUntil(timeout: 30) { connections() == 1 }, "\(bridge.log)")
        try broker.restart()
        #expect(waitUntil(timeout: 30) { connections() == 2 }, "\(bridge.log)")
        #expect(!bridge.log.contains("certificate verify failed"), "\(bridge.log)")
    }
}
