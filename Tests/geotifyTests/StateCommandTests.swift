import Foundation
import GeotifyCore
import GeotifyStore
import GeotifyTestSupport
import Testing

/// `geotify state reshard`, the command an operator runs between stopping N instances
/// and starting M: what it prints when it moved the states, and how it fails (a usage
/// error, status 2; a reshard that cannot be done, status 1 with the reason, nothing
/// changed). What the move itself keeps is `StateReshardTests`' and `ShardTests`'.
@Suite("geotify state", .waiting)
struct StateCommandTests {
    let directory: URL
    let states: [String]
    /// Devices owned by each of two instances.
    static let devices = (0..<7).map { "u/\($0)" }
    var devices: [String] { Self.devices }

    init() throws {
        let directory = try makeTemporaryDirectory("state-command")
        let states = ["state-0", "state-1"].map { directory.appendingPathComponent($0).path }
        self.directory = directory
        self.states = states
        for (index, path) in states.enumerated() {
            let owned = Self.devices.filter { ShardAssignment.shard(of: $0, among: 2) == index }
            try StateStore(directory: path).save(devices: owned.map { ($0, DeviceState(badge: 1), true) }, outbox: [])
        }
    }

    @Test func reshardingTwoInstancesToOneSaysWhatMoved() throws {
        let moved = devices.filter { ShardAssignment.shard(of: $0, among: 2) == 1 }.count
        let result = try runGeotify(["state", "reshard", "--from", "2", "--to", "1"] + states, in: directory)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == "resharded 2 → 1: \(moved) device state\(moved == 1 ? "" : "s") moved, \(devices.count - moved) kept; devices per instance: \(devices.count)\n")
        #expect(result.error == "")
        #expect(try StateStore(directory: states[0]).loadDevicesAndNames().states.keys.sorted() == devices.sorted())
    }

    /// A store whose outbox hand-over mark is damaged is repaired when the reshard opens
    /// it, and the command warns what that cost (`DamagedOutboxMark`), as a start does.
    @Test func aDamagedOutboxMarkIsWarnedAbout() throws {
        let mark = (states[1] as NSString).appendingPathComponent("outbox.handed")
        try Data(repeating: 0x41, count: 24).write(to: URL(fileURLWithPath: mark))
        let result = try runGeotify(["state", "reshard", "--from", "2", "--to", "1"] + states, in: directory)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.hasPrefix("geotify: warning: the outbox hand-over mark \(mark) was damaged ("), "\(result.error)")
        #expect(result.output.hasPrefix("resharded 2 → 1: "))
    }

    @Test(arguments: [
        (["state"], "geotify: missing subcommand: geotify state reshard ... (see 'geotify state --help')\n"),
        (["state", "move"], "geotify: unknown subcommand \"move\" (see 'geotify state --help')\n"),
        (["state", "reshard", "--from", "two", "--to", "1"], "geotify: --from and --to need numbers of instances (see 'geotify state --help')\n"),
    ])
    func aCommandLineThatCannotBeRunIsAUsageError(arguments: [String], error: String) throws {
        let result = try runGeotify(arguments, in: directory)
        #expect(result.status == 2)
        #expect(result.error == error)
        #expect(result.output == "")
    }

    @Test func aReshardThatCannotBeDoneFailsWithTheReasonAndChangesNothing() throws {
        let result = try runGeotify(["state", "reshard", "--from", "2", "--to", "1", states[0]], in: directory)
        #expect(result.status == 1)
        #expect(result.error == "geotify: reshard: 2 → 1 needs 2 state directories, instance 0 first; 1 given\n")
        #expect(result.output == "")
        let owned = devices.filter { ShardAssignment.shard(of: $0, among: 2) == 0 }
        #expect(try StateStore(directory: states[0]).loadDevicesAndNames().states.keys.sorted() == owned.sorted())
    }
}
