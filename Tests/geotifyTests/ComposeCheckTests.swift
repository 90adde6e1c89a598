import Foundation
import GeotifyTestSupport
import Testing

/// `scripts/check-compose`, which `scripts/validate-deployment` runs after
/// `docker-compose config`: it passes the shipped Compose files and fails on each
/// breakage `docker-compose config` lets through, the ones the cluster file had before
/// it could start among them (a mount of a file that no longer existed, settings the
/// image did not hold, the broker published on every interface, the obsolete `version:`
/// key).
@Suite("Compose file check", .waiting)
struct ComposeCheckTests {
    let directory: URL

    init() throws {
        directory = try makeTemporaryDirectory("compose")
    }

    /// The repository, three levels above this file.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs the check on `files`; its exit code and what it printed.
    func check(_ files: [String]) throws -> (status: Int32?, output: String) {
        let output = directory.appendingPathComponent("check-\(UUID().uuidString).out")
        let process = try ChildProcess(
            executable: testPython,
            arguments: [Self.root.appendingPathComponent("scripts/check-compose").path] + files,
            outputFile: output)
        #expect(process.waitForExit(timeout: 60))
        return (process.exitCode, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    /// The shipped cluster file with `change` applied, written into the test's directory.
    func brokenClusterFile(_ change: (String) -> String) throws -> String {
        let shipped = try String(contentsOf: Self.root.appendingPathComponent("docker-compose.cluster.yml"), encoding: .utf8)
        let broken = change(shipped)
        #expect(broken != shipped, "the change must apply to docker-compose.cluster.yml")
        let file = directory.appendingPathComponent("docker-compose.cluster.yml")
        try broken.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test(.longWaiting) func theShippedComposeFilesPass() throws {
        let result = try check(["docker-compose.yml", "docker-compose.cluster.yml"].map { Self.root.appendingPathComponent($0).path })
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.isEmpty)
    }

    @Test(arguments: ComposeBreakage.allCases)
    func eachBreakageFailsTheCheck(breakage: ComposeBreakage) throws {
        let file = try brokenClusterFile(breakage.apply)
        let result = try check([file])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains(breakage.complaint), "\(result.output)")
    }
}

/// One way to break docker-compose.cluster.yml that `docker-compose config` accepts, and
/// what scripts/check-compose says about it.
enum ComposeBreakage: CaseIterable, Sendable {
    case versionKey
    case brokerOnEveryInterface
    case mountOfAMissingFile
    case healthCheckSettingsNotMounted
    case settingsMissingFromAMountedDirectory

    /// `text` (the shipped file) broken this way.
    func apply(_ text: String) -> String {
        switch self {
        case .versionKey:
            "version: \"3.8\"\n" + text
        case .brokerOnEveryInterface:
            text.replacingOccurrences(of: "\"127.0.0.1:1883:1883\"", with: "\"1883:1883\"")
        case .mountOfAMissingFile:
            text.replacingOccurrences(of: "./docker/mosquitto.conf:", with: "./config/mosquitto-docker.conf:")
        case .healthCheckSettingsNotMounted:
            text.replacingOccurrences(of: "      - ./docker/cluster/health-1.json:/etc/geotify/health.json:ro\n", with: "")
        case .settingsMissingFromAMountedDirectory:
            text.replacingOccurrences(
                of: "      GEOTIFY_SHARD: \"2/3\"\n",
                with: "      GEOTIFY_SHARD: \"2/3\"\n    command: [\"run\", \"--config\", \"/etc/geotify/cluster/geotify-cluster.json\"]\n"
            ).replacingOccurrences(
                of: "./docker/cluster/geotify-2.json:/etc/geotify/geotify.json", with: "./docker/cluster:/etc/geotify/cluster")
        }
    }

    /// What the check prints about it.
    var complaint: String {
        switch self {
        case .versionKey: "the obsolete top-level \"version:\" key"
        case .brokerOnEveryInterface: "mosquitto: port"
        case .mountOfAMissingFile: "mounts config/mosquitto-docker.conf on /mosquitto/config/mosquitto.conf, which does not exist"
        case .healthCheckSettingsNotMounted: "geotify-1: /etc/geotify/health.json (in healthcheck) is neither mounted nor copied into the image"
        case .settingsMissingFromAMountedDirectory: "geotify-2: /etc/geotify/cluster/geotify-cluster.json (in command) is not in the bind mount"
        }
    }
}
