import Foundation
import GeotifyTestSupport
import Testing

/// `scripts/run-bridge`'s choice of broker, with the installing and building steps
/// replaced by stubs and `geotify` by one that prints its arguments: a broker already
/// listening is used and left alone, with a warning that its queue may drop positions;
/// with none, the script starts its own, sized, says so without a warning, and stops it.
@Suite("scripts/run-bridge and the broker it finds", .serialized, .waiting)
struct RunBridgeScriptTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let directory: URL

    /// A copy of the script and the example settings, with local/geotify.json naming
    /// 127.0.0.1:`port`, and stubs for the steps that install and build.
    init() throws {
        directory = try makeTemporaryDirectory("run-bridge")
        let manager = FileManager.default
        for folder in ["scripts", "config", "local", "bin"] {
            try manager.createDirectory(at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        for file in ["scripts/run-bridge", "config/geotify.json", "config/fences.json"] {
            try manager.copyItem(at: Self.root.appendingPathComponent(file), to: directory.appendingPathComponent(file))
        }
        try stub("scripts/install-dependencies", "exit 0")
        try stub("scripts/geotify", #"echo "geotify $*""#)
        try stub("scripts/build-release", #"echo "$(cd "$(dirname "$0")" && pwd)/geotify""#)
    }

    /// Writes the shell script `path`, executable. Its descriptor is close-on-exec (which
    /// Foundation's writes are not): a process another test starts while it is open
    /// would keep it open for writing, and running the script would fail with "Text file
    /// busy" for as long as that process lives.
    func stub(_ path: String, _ body: String) throws {
        let url = directory.appendingPathComponent(path)
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw TestSupportError("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let bytes = Array("#!/bin/sh\n\(body)\n".utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else {
            throw TestSupportError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Runs the script with its local settings naming `port`; what it printed on its
    /// standard output and error (one file: the order of the lines is the order they
    /// came in), and its exit code. A `ChildProcess`, so the broker it starts has the
    /// default signal mask and its SIGTERM stops it.
    func run(port: Int, environment: [String: String]? = nil) throws -> (output: String, status: Int32?) {
        let settings = try String(contentsOf: Self.root.appendingPathComponent("config/geotify.json"), encoding: .utf8)
            .replacingOccurrences(of: "mqtt://127.0.0.1:1883", with: "mqtt://127.0.0.1:\(port)")
        try settings.write(to: directory.appendingPathComponent("local/geotify.json"), atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("script.log")
        // The child's output is appended: a run of the same test before this one (another
        // port, `runOnAFreePort`) must not be read as this one's.
        try? FileManager.default.removeItem(at: log)
        let script = try ChildProcess(
            executable: "/bin/bash", arguments: [directory.appendingPathComponent("scripts/run-bridge").path],
            environment: environment, outputFile: log)
        guard script.waitForExit(timeout: 60) else { throw TestSupportError("scripts/run-bridge did not end") }
        return (try String(contentsOf: log, encoding: .utf8), script.exitCode)
    }

    /// Something listening on the port `runOnAFreePort` chose, taken after the choice.
    struct PortTakenMeanwhile: Error {}

    /// Runs the script (as `run`) on a port free when chosen, and again on another when
    /// the script found something listening there: another suite's server took the port
    /// between its choice and the script's look (the suites run in parallel, each
    /// choosing ports), which would read as a broker the user already runs.
    func runOnAFreePort(environment: [String: String]? = nil) throws -> (port: Int, output: String, status: Int32?) {
        let (result, ports) = try withFreePorts(1, retrying: { $0 is PortTakenMeanwhile }) { ports in
            let result = try run(port: ports[0], environment: environment)
            if result.output.contains("using the broker already listening on 127.0.0.1:\(ports[0])") { throw PortTakenMeanwhile() }
            return result
        }
        return (ports[0], result.output, result.status)
    }

    @Test func aBrokerAlreadyListeningIsUsedWithAWarningAboutItsQueue() throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        let result = try run(port: broker.port)
        #expect(result.status == 0)
        #expect(result.output.hasSuffix("geotify run --config local/geotify.json\n"), "\(result.output)")
        #expect(result.output.contains("using the broker already listening on 127.0.0.1:\(broker.port) (not started by this script, so left alone)\n"))
        #expect(result.output.contains("warning: this script cannot see that broker's max_queued_messages; mosquitto's default (and that of Debian's mosquitto service) is 1000"))
        #expect(result.output.contains("set max_queued_messages 100000 in its config as config/mosquitto.conf does, or stop it and this script starts its own (docs/reliability.md)\n"))
        #expect(acceptsConnections(port: broker.port), "the broker it did not start is left running")
    }

    /// Run with the `PATH` of an ordinary user of Debian, which holds no `sbin`
    /// directory: the script finds mosquitto in /usr/sbin, where Debian installs it.
    @Test func withoutABrokerItStartsItsOwnWithoutAWarningAndStopsIt() throws {
        let environment = ProcessInfo.processInfo.environment.merging(["PATH": "/usr/local/bin:/usr/bin:/bin"]) { $1 }
        let result = try runOnAFreePort(environment: environment)
        let port = result.port
        #expect(result.status == 0)
        #expect(result.output.contains("started mosquitto on 127.0.0.1:\(port)"), "\(result.output)")
        #expect(result.output.contains("stopped the mosquitto this script started"))
        #expect(!result.output.contains("warning"))
        let config = try String(contentsOf: directory.appendingPathComponent("local/mosquitto.conf"), encoding: .utf8)
        #expect(config.contains("max_queued_messages 100000\n"))
        let pid = try #require(runBridgeBrokerPID(in: result.output, port: port), "\(result.output)")
        #expect(waitUntilEnded(pid: pid), "the broker it started (pid \(pid)) is stopped with the bridge")
    }

    /// mosquitto loses a SIGTERM that comes while it finishes starting (it already
    /// listens, and sets its running flag after installing its handler), and the bridge
    /// stub here stops at once, which once left the broker running in 12 runs of the
    /// suite with both cores busy. A `mosquitto` first on PATH that loses its first
    /// SIGTERM the same way (it runs the real one as its child, after setting its trap,
    /// so the port answers only once the trap is in place): the script asks again until
    /// it has stopped.
    @Test func aBrokerThatLosesTheFirstSIGTERMIsAskedAgainUntilItStops() throws {
        let real = try #require(mosquittoExecutable(), "mosquitto is installed")
        try stub("bin/mosquitto", """
            terms=0
            trap 'terms=$((terms + 1)); if [ "$terms" = 1 ]; then echo "lost the first SIGTERM"; else kill "$child"; fi' TERM
            \(real) "$@" &
            child=$!
            while kill -0 "$child" 2>/dev/null; do wait "$child"; done
            """)
        let path = directory.appendingPathComponent("bin").path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let environment = ProcessInfo.processInfo.environment.merging(["PATH": path]) { $1 }
        let result = try runOnAFreePort(environment: environment)
        let port = result.port
        let pid = try #require(runBridgeBrokerPID(in: result.output, port: port), "\(result.output)")
        defer { kill(-pid, SIGKILL) }
        #expect(result.status == 0)
        #expect(result.output.contains("stopped the mosquitto this script started (pid \(pid))"), "\(result.output)")
        #expect(waitUntilEnded(pid: pid), "the broker it started (pid \(pid)) is stopped with the bridge")
        let log = try String(contentsOf: directory.appendingPathComponent("local/mosquitto.log"), encoding: .utf8)
        #expect(log.contains("lost the first SIGTERM\n"), "\(log)")
    }

    /// A mosquitto that cannot start (here one that exits at once, as with a port
    /// another program took meanwhile) is said, with the end of its log, and the script
    /// fails: it does not claim a broker it started and run the bridge against nothing.
    @Test func aBrokerThatCannotStartIsSaidAndTheScriptFails() throws {
        try stub("bin/mosquitto", #"echo "Error: Address already in use"; exit 1"#)
        let path = directory.appendingPathComponent("bin").path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let environment = ProcessInfo.processInfo.environment.merging(["PATH": path]) { $1 }
        let result = try runOnAFreePort(environment: environment)
        #expect(result.status == 1)
        #expect(result.output.contains("mosquitto did not start listening on 127.0.0.1:\(result.port); its log (local/mosquitto.log) ends:\nError: Address already in use\n"), "\(result.output)")
        #expect(!result.output.contains("started mosquitto"), "\(result.output)")
        #expect(!result.output.contains("geotify run"), "the bridge is not run: \(result.output)")
    }
}
