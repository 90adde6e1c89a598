import Foundation

/// The end-to-end baseline: the same traffic through the broker and stock C clients
/// that do no work, `mosquitto_sub -t 'owntracks/#' | mosquitto_pub -l -t out`, both at
/// QoS 1 as Geotify subscribes and publishes, so the ratio compares like with like.
final class StockPipeline {
    private let subscriber = Process()
    private let publisher = Process()

    /// Starts the pair against the broker on `port`.
    init(port: Int) throws {
        let pipe = Pipe()
        publisher.executableURL = URL(fileURLWithPath: BrokerProcess.executable("mosquitto_pub", in: ["/usr/bin"]))
        publisher.arguments = ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", "out", "-l"]
        publisher.standardInput = pipe
        publisher.standardOutput = FileHandle.nullDevice
        publisher.standardError = FileHandle.nullDevice
        subscriber.executableURL = URL(fileURLWithPath: BrokerProcess.executable("mosquitto_sub", in: ["/usr/bin"]))
        subscriber.arguments = ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", "owntracks/#"]
        subscriber.standardOutput = pipe
        subscriber.standardError = FileHandle.nullDevice
        try publisher.run()
        try subscriber.run()
    }

    /// Stops both clients.
    func stop() {
        for process in [subscriber, publisher] where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
