import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import GeotifyTime

/// An `MQTTClient` under test together with the recorder of its events.
struct ClientFixture {
    let client: MQTTClient
    let events: EventRecorder

    /// Makes a client for 127.0.0.1:`port` with a unique id and short reconnect delays
    /// (timed by `clock`: the system's unless a test moves a `ManualScheduler`), lets
    /// `configure` adjust the options, and starts it (without waiting to connect).
    init(port: Int, clock: any Scheduler = SystemScheduler(), _ configure: (inout MQTTOptions) -> Void = { _ in }) throws {
        var options = MQTTOptions(clientID: "geotify-\(UUID().uuidString.prefix(12))", port: port)
        options.cleanSession = true
        options.reconnectDelayMin = 0.05
        options.reconnectDelayMax = 0.5
        configure(&options)
        events = EventRecorder()
        client = try MQTTClient(options: options, scheduler: clock, onEvent: events.record)
        try client.start()
    }

    /// Waits (bounded) for the first `.connected`; throws if it does not come.
    func waitConnected() throws {
        guard events.waitForConnected() != nil else {
            throw TestSupportError("the client did not connect: \(events.all)")
        }
    }
}
