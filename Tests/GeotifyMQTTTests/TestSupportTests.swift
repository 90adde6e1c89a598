import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import Testing

@Suite("Test support", .waiting)
struct TestSupportTests {
    @Test("freePort gives a port nothing listens on")
    func freePortIsFree() throws {
        let port = try freePort()
        #expect((1...65535).contains(port))
        _ = try TestBroker(port: port)
    }

    @Test("a missing test Python says how to install it")
    func missingTestPythonSaysWhatToRun() {
        #expect(ChildProcess.missingHint(testPython, ENOENT).contains("run scripts/install-dependencies"))
        #expect(ChildProcess.missingHint(testPython, EACCES) == "")
        #expect(ChildProcess.missingHint("/usr/bin/no-such-program", ENOENT) == "")
    }

    @Test("a closed port refuses connections, and no server can take it while it lives")
    func closedPortStaysClosed() throws {
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        #expect(!acceptsConnections(port: closed.port))
        // mosquitto sets SO_REUSEADDR on its listeners, as most servers do.
        #expect(throws: TestSupportError.self) { try TestBroker(port: closed.port) }
        #expect(!acceptsConnections(port: closed.port))
    }

    @Test("a closed port admits the test's own server while it is still held")
    func closedPortAdmitsTheServerThatComes() throws {
        let closed = try ClosedPort()
        try closed.admitServer()
        let broker = try TestBroker(port: closed.port)
        defer { broker.stop() }
        #expect(acceptsConnections(port: closed.port))
        closed.release()
        #expect(acceptsConnections(port: closed.port))
    }

    @Test("a broker keeps its queue for a persistent session across restart()")
    func persistentRestart() throws {
        let broker = try TestBroker(persistence: true)
        let topic = uniqueTopic("persisted")
        let id = "geotify-sleeper-\(UUID().uuidString.prefix(8))"
        let sleeper = try ClientFixture(port: broker.port) { $0.clientID = id; $0.cleanSession = false }
        try sleeper.waitConnected()
        #expect(sleeper.events.waitForSubscribed(try sleeper.client.subscribe(topic, qos: 1)) == [1])
        sleeper.client.stop()

        let sender = try TestClient(port: broker.port)
        try sender.publish(topic, "while you slept")
        sender.disconnect()
        try broker.restart()

        let awake = try ClientFixture(port: broker.port) { $0.clientID = id; $0.cleanSession = false }
        #expect(awake.events.waitForConnected() == true)
        #expect(waitUntil { awake.events.messages.contains { $0.text == "while you slept" } })
        awake.client.stop()
        broker.stop()
        broker.stop()
        #expect(broker.log.contains("running"))
    }

    @Test("the products directory holds the test bundle")
    func products() throws {
        let contents = try FileManager.default.contentsOfDirectory(atPath: productsDirectory.path)
        #expect(contents.contains { $0.hasSuffix(".xctest") })
    }

    @Test("MQTTMessage.text decodes UTF-8")
    func text() {
        #expect(MQTTMessage(topic: "t", payload: Array("grüß".utf8)).text == "grüß")
    }
}
