import GeotifyCore
import Testing

@Suite("Shard assignment")
struct ShardAssignmentTests {
    let devices = (0..<30_000).map { "user\($0 / 3)/device\($0 % 3)" }

    @Test func everyDeviceHasExactlyOneOwnerAndTheSharesAreEven() throws {
        let shards = try (0..<3).map { try ShardAssignment(index: $0, count: 3) }
        var counts = [0, 0, 0]
        for device in devices {
            let owners = shards.filter { $0.owns(device) }
            #expect(owners.count == 1)
            counts[owners[0].index] += 1
        }
        #expect(counts.allSatisfy { abs($0 - 10_000) < 400 }, "\(counts)")
    }

    @Test func theHashIsFixedAcrossProcessesAndPlatforms() {
        // Pinned values: a change here moves devices between the instances of every
        // running deployment and needs a reshard.
        #expect(["alice/phone", "bob/phone", "van/7", "u0/p"].map { ShardAssignment.shard(of: $0, among: 3) } == [1, 1, 0, 0])
        #expect(ShardAssignment.shard(of: "alice/phone", among: 1) == 0)
    }

    @Test func growingByOneMovesOnlyTheNewInstancesShare() {
        let moved = devices.filter { ShardAssignment.shard(of: $0, among: 3) != ShardAssignment.shard(of: $0, among: 4) }
        #expect(moved.allSatisfy { ShardAssignment.shard(of: $0, among: 4) == 3 }, "devices move only to the new instance")
        #expect(abs(moved.count - devices.count / 4) < 500, "about a quarter move: \(moved.count)")
    }

    @Test func aShardsDevicesSpreadEvenlyOverTheLanesInside() {
        // The lanes of an instance use FNV-1a modulo their number: the shard must not
        // decide it (with a plain modulo, all of shard 0 of 2 would be on lane 0 of 2).
        let own = devices.filter { ShardAssignment.shard(of: $0, among: 2) == 0 }
        let onLaneZero = own.filter { StableHash.fnv1a($0) % 2 == 0 }.count
        #expect(abs(onLaneZero - own.count / 2) < own.count / 20, "\(onLaneZero) of \(own.count)")
    }

    @Test func parsesIndexAndCountOrTheOrdinalOfAStatefulSetPod() throws {
        #expect(try ShardAssignment(parsing: "2/3", podName: nil) == ShardAssignment(index: 2, count: 3))
        #expect(try ShardAssignment(parsing: "ordinal/3", podName: "geotify-1") == ShardAssignment(index: 1, count: 3))
        #expect(try ShardAssignment(parsing: "ordinal/12", podName: "my-geotify-11") == ShardAssignment(index: 11, count: 12))
        #expect(try ShardAssignment(parsing: "0/1", podName: nil).clientID("geotify") == "geotify")
        #expect(try ShardAssignment(parsing: "2/3", podName: nil).clientID("geotify") == "geotify-2")
        #expect(try ShardAssignment(parsing: "1023/1024", podName: nil) == ShardAssignment(index: 1023, count: 1024), "maximumCount instances")
        #expect(try ShardAssignment(parsing: "ordinal/1024", podName: "geotify-1023") == ShardAssignment(index: 1023, count: 1024))
    }

    @Test(arguments: [
        ("3/3", "geotify-0", "the shard must be from 0 to 2 when there are 3 (counted from 0), not 3"),
        ("0/0", nil, "the number of shards must be from 1 to 1024, not 0"),
        ("1", nil, "a shard is \"<index>/<count>\""),
        ("-1/3", nil, "the shard index in \"-1/3\" must be a number from 0, or \"ordinal\""),
        ("ordinal/3", nil, "but neither POD_NAME nor HOSTNAME is set"),
        ("ordinal/3", "laptop", "\"laptop\" does not end in -<ordinal>"),
        ("ordinal/3", "geotify-5", "not 5"),
        ("1/99999", nil, "a shard is"),
        ("0/1025", nil, "the number of shards must be from 1 to 1024, not 1025"),
        ("ordinal/3", "", "but neither POD_NAME nor HOSTNAME is set"),
    ] as [(String, String?, String)])
    func badSettingsGetASpecificMessage(text: String, pod: String?, message: String) {
        #expect(throws: ShardAssignment.Invalid.self) { try ShardAssignment(parsing: text, podName: pod) }
        do {
            _ = try ShardAssignment(parsing: text, podName: pod)
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }
}
