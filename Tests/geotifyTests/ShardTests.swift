import Foundation
import GeotifyCore
import GeotifyStore
import GeotifyTestSupport
import Testing

/// Several instances sharing the devices (`shard`), as processes on one mosquitto: they
/// publish what one instance publishes, each device from exactly one of them, and stay
/// right when one is killed, when their number changes and when fence commands reach
/// several at once.
@Suite("Shards", .serialized, .waiting)
struct ShardTests {
    static let steps = 7

    /// The notifications each device's traffic makes: one per step after the first, and
    /// a second on the last step for the devices that go from home to the plaza.
    static func expected(devices: Int) -> Int {
        devices * (steps - 1) + (0..<devices).filter { $0 % 3 == 0 }.count
    }

    @Test(.longWaiting) func threeShardsPublishPerDeviceWhatOneInstancePublishes() throws {
        let cluster = try ShardCluster(name: "shards-same", devices: 300)
        try cluster.observe(["single", "cluster"])
        let reference = try cluster.bridge("single", prefix: "single", shard: nil)
        let shards = try (0..<3).map { try cluster.bridge("shard\($0)", prefix: "cluster", shard: "\($0)/3") }
        #expect(try cluster.start([reference] + shards, statusTopics: ["single/status"] + (0..<3).map { "cluster/shard/\($0)/status" }))

        for step in 0..<Self.steps {
            try cluster.publish(step: step) { ShardCluster.place(step: step, device: $0) }
        }
        let total = Self.expected(devices: 300)
        #expect(waitUntil(timeout: 40) { cluster.count("single") == total && cluster.count("cluster") == total },
                "single \(cluster.count("single")), cluster \(cluster.count("cluster")) of \(total)")
        #expect(waitUntil { cluster.last("cluster/occupancy/shared/plaza") == cluster.last("single/occupancy/shared/plaza") })

        #expect(cluster.notifications("cluster") == cluster.notifications("single"), "per device, the same notifications in the same order")
        #expect(cluster.last("single/occupancy/shared/plaza") == "100")
        #expect(cluster.last("cluster/occupancy/shared/plaza") == "100", "the total of the parts")
        var seen: Set<String> = []
        for (index, shard) in shards.enumerated() {
            let notified = try cluster.notifiedDevices(in: shard)
            #expect(notified.allSatisfy { ShardAssignment.shard(of: $0, among: 3) == index }, "shard \(index) notifies only for its own devices")
            #expect(seen.isDisjoint(with: notified))
            seen.formUnion(notified)
            #expect(try shard.query("SELECT id FROM device").allSatisfy { ShardAssignment.shard(of: $0, among: 3) == index })
        }
        #expect(seen == Set(cluster.devices), "every device from exactly one shard")
    }

    @Test(.longWaiting) func aShardKilledWhilePositionsFlowCatchesUpAndTheOthersDoNotNotice() throws {
        let cluster = try ShardCluster(name: "shards-kill", devices: 90)
        try cluster.observe(["single", "cluster"])
        let reference = try cluster.bridge("single", prefix: "single", shard: nil)
        let shards = try (0..<3).map { try cluster.bridge("shard\($0)", prefix: "cluster", shard: "\($0)/3") }
        #expect(try cluster.start([reference] + shards, statusTopics: ["single/status"] + (0..<3).map { "cluster/shard/\($0)/status" }))
        let killed = shards[1]
        let killedDevices = Set(cluster.devices.filter { ShardAssignment.shard(of: $0, among: 3) == 1 })

        // Positions keep flowing while the shard is down: 20 steps of 90 positions (200 s
        // of the trackers' time), each sent once the reference bridge has published the
        // step before (from the second step on, every position is a transition).
        let steps = 30, killedAt = 4
        let traffic = Traffic(cluster: cluster, steps: steps, holdBefore: killedAt + 1) { step in cluster.count("single") >= 90 * step }
        #expect(traffic.waitUntilHolding())
        killed.kill()
        var committed: [String: Int] = [:]
        for row in try killed.query("SELECT id, tst FROM device") {
            let parts = row.split(separator: "|")
            committed[String(parts[0])] = Int(Double(parts[1]) ?? 0)
        }
        var handed: Set<String> = []
        let marks = try killed.outboxMarks()
        for message in try killed.outboxMessages(after: marks.acknowledged, through: marks.handed) where message.topic.hasPrefix("cluster/event/") {
            if let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any], let id = object["id"] as? String { handed.insert(id) }
        }
        traffic.resume()
        #expect(traffic.waitFor(step: killedAt + 20), "20 steps of traffic pass while the shard is down")
        let others = { (notifications: [String: [String]]) in notifications.filter { !killedDevices.contains($0.key) } }
        #expect(waitUntil(timeout: 20) { others(cluster.notifications("cluster")) == others(cluster.notifications("single")) },
                "the other shards keep up while one is down")
        #expect(cluster.notifications("cluster").filter { killedDevices.contains($0.key) }.values.allSatisfy { ids in
            ids.allSatisfy { id in Self.step(of: id, base: cluster.base) <= killedAt }
        }, "nothing of the killed shard's devices after the kill")
        try killed.start()
        #expect(traffic.waitUntilDone())
        let total = 90 * (steps - 1)
        #expect(waitUntil(timeout: 30) { cluster.count("single") == total }, "single \(cluster.count("single")) of \(total)")
        let single = cluster.notifications("single")
        #expect(waitUntil(timeout: 30) {
            let published = cluster.notifications("cluster")
            return published.count == single.count && single.allSatisfy { published[$0.key]?.last == $0.value.last }
        }, "the restarted shard caught up with the positions queued in its session")

        let published = cluster.notifications("cluster")
        #expect(others(published) == others(single), "the other shards' devices: exactly what one instance publishes")
        for device in killedDevices {
            let ids = published[device] ?? []
            #expect(Set(ids).count == ids.count, "\(device): no notification repeated")
            let missing = Set(single[device] ?? []).subtracting(ids)
            #expect(missing.allSatisfy { id in
                let step = Self.step(of: id, base: cluster.base)
                return handed.contains(id) || step <= killedAt && cluster.base + step * 10 > (committed[device] ?? Int.min)
            }, "\(device): lost only what was in flight when the shard was killed (positions received but not committed, notifications handed over but not acknowledged): \(missing.sorted())")
        }
    }

    @Test func reshardingThreeToTwoNeitherRepeatsAnEnterNorLosesAnExit() throws {
        let cluster = try ShardCluster(name: "shards-reshard", devices: 60)
        try cluster.observe(["cluster"])
        let three = try (0..<3).map { try cluster.bridge("shard\($0)", prefix: "cluster", shard: "\($0)/3") }
        #expect(try cluster.start(three, statusTopics: (0..<3).map { "cluster/shard/\($0)/status" }))
        try cluster.publish(step: 0) { _ in .away }
        try cluster.publish(step: 1) { $0 % 2 == 0 ? .home : .plaza }
        #expect(waitUntil(timeout: 30) { cluster.count("cluster") == 60 }, "every device entered a fence: \(cluster.count("cluster"))")
        #expect(waitUntil { cluster.last("cluster/occupancy/shared/plaza") == "30" })
        cluster.stop(three)

        let report = try StateReshard.run(directories: three.map(\.stateDirectory), from: 3, to: 2)
        #expect(report.moved + report.kept == 60)
        #expect(report.devices.reduce(0, +) == 60)
        let two = try (0..<2).map { try cluster.bridge("shard\($0)", prefix: "cluster", shard: "\($0)/2") }
        cluster.observer.clear()
        #expect(try cluster.start(two, statusTopics: (0..<2).map { "cluster/shard/\($0)/status" }))

        try cluster.publish(step: 2) { $0 % 2 == 0 ? .home : .plaza }
        try cluster.publish(step: 3) { _ in .away }
        #expect(waitUntil(timeout: 30) { cluster.count("cluster") == 60 }, "every device left its fence: \(cluster.count("cluster"))")
        #expect(waitUntil { cluster.last("cluster/occupancy/shared/plaza") == "0" })
        let after = cluster.notifications("cluster")
        for (index, device) in cluster.devices.enumerated() {
            let fence = index % 2 == 0 ? "home" : "plaza"
            #expect(after[device] == ["\(device)/\(fence)/exit/\(cluster.base + 30)"], "\(device): one exit, no enter again")
        }
        for (index, shard) in two.enumerated() {
            #expect(try shard.query("SELECT id FROM device").allSatisfy { ShardAssignment.shard(of: $0, among: 2) == index })
        }
        #expect(try three[2].query("SELECT count(*) FROM device") == ["0"], "the dropped instance's store is empty")
    }

    @Test func fenceCommandsToDevicesOfDifferentShardsAtOnceAreAllApplied() throws {
        let cluster = try ShardCluster(name: "shards-commands", devices: 60)
        try cluster.observe(["cluster"])
        let shards = try (0..<3).map { try cluster.bridge("shard\($0)", prefix: "cluster", shard: "\($0)/3") }
        #expect(try cluster.start(shards, statusTopics: (0..<3).map { "cluster/shard/\($0)/status" }))
        for (index, device) in cluster.devices.enumerated() {
            let fence = #"{"identifier": "work", "latitude": \#(60 + Double(index) / 100), "longitude": 9, "radius": 150, "eventType": "onEntry"}"#
            try cluster.observer.publish("cluster/cmd/\(device)", #"{"action": "add", "id": "\#(index)", "fence": \#(fence)}"#)
        }
        #expect(waitUntil(timeout: 30) { cluster.observer.messages.filter { $0.topic.hasPrefix("cluster/reply/") }.count >= 60 })
        let replies = Dictionary(grouping: cluster.observer.messages.filter { $0.topic.hasPrefix("cluster/reply/") }) { String($0.topic.dropFirst(14)) }
        #expect(replies.count == 60 && replies.values.allSatisfy { $0.count == 1 }, "each device answered once, by its owner")
        #expect(replies.values.allSatisfy { $0[0].text.contains(#""ok":true"#) }, "every change applied")

        for device in cluster.devices {
            let file = cluster.fences.appendingPathComponent("devices/\(device.replacingOccurrences(of: "/", with: "%2F")).json")
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text.contains(#""identifier" : "home""#) || text.contains(#""identifier": "home""#), "\(device) keeps its home")
            #expect(text.contains("\"work\""), "\(device) has its new fence")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: cluster.fences.appendingPathComponent("devices").path)
        #expect(names.filter { !$0.hasPrefix(".") }.count == 60, "one file per device, no other")
        let check = try runGeotify(["check", "--fences", cluster.fences.path], in: cluster.directory)
        #expect(check.status == 0, "geotify check: \(check.output)\(check.error)")
        #expect(check.output.contains("valid, 121 fences for 60 devices"), "\(check.output)")
    }

    /// The step of a notification id (`<device>/<fence>/<kind>/<fix time>`).
    static func step(of id: String, base: Int) -> Int {
        (Int(Double(id.split(separator: "/").last ?? "") ?? 0) - base) / 10
    }
}
