import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyMQTT
import GeotifyCore
import GeotifyStore

/// The fence commands through the pure lane core: the app's list, Add, Edit, Delete...
/// and Peek & Pop, with the fence file's part played by the fixture's book.
@Suite("Lane core: commands")
struct LaneCoreCommandTests {
    static let fences = """
        { "devices": {
            "alice/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                "note": "Welcome home", "eventType": "onEntry" } ],
            "bob/phone": [] } }
        """
    static let office = #"{"identifier":"office","latitude":52.50,"longitude":13.30,"radius":150,"note":"Work","eventType":"onEntry"}"#

    func code(_ reply: [String: Any]?) -> String? {
        (reply?["error"] as? [String: Any])?["code"] as? String
    }

    @Test func listAndGetAnswerAtOnce() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        let list = lane.command("alice/phone", #"{"action":"list","id":"q1"}"#).reply("alice/phone")
        #expect(list?["ok"] as? Bool == true && list?["id"] as? String == "q1" && list?["action"] as? String == "list")
        #expect((list?["fences"] as? [[String: Any]])?.map { $0["identifier"] as? String } == ["home"])
        let get = lane.command("alice/phone", #"{"action":"get","fence":"home"}"#).reply("alice/phone")
        #expect((get?["relation"] as? [String: Any])?["state"] as? String == "inside")
        let unknown = lane.command("alice/phone", #"{"action":"get","fence":"gym"}"#)
        #expect(code(unknown.reply("alice/phone")) == "unknown_fence")
        #expect(unknown.counters[.commandsRefused(.unknownFence)] == 1)
    }

    /// A command's `relation` decides as the evaluator does: with `accuracyAware` off,
    /// by the fix's centre alone (outside, 150 m from the centre of a fence of 100 m);
    /// on, the same fix's accuracy circle of 80 m crosses the edge (unknown).
    @Test func theRelationUsesTheFixsAccuracyOnlyWhenAccuracyAware() throws {
        for (aware, expected) in [(false, "outside"), (true, "unknown")] {
            var lane = try LaneFixture(fences: Self.fences) { $0.rules.accuracyAware = aware }
            _ = lane.ownTracks("alice/phone", 52.52 + 150 / 111_250, 13.405, acc: 80)
            let get = lane.command("alice/phone", #"{"action":"get","fence":"home"}"#).reply("alice/phone")
            #expect((get?["relation"] as? [String: Any])?["state"] as? String == expected, "accuracyAware \(aware)")
        }
    }

    @Test func addIsWrittenThenAnswered() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let asked = lane.command("alice/phone", #"{"action":"add","fence":\#(Self.office)}"#)
        #expect(asked.direct.isEmpty, "the answer waits for the write")
        #expect(asked.fenceWrites.map(\.change.device) == ["alice/phone"])
        let answered = lane.write(asked)
        let reply = answered.reply("alice/phone")
        #expect(reply?["ok"] as? Bool == true)
        #expect((reply?["fence"] as? [String: Any])?["identifier"] as? String == "office")
        #expect(lane.book.fences(of: "alice/phone").map(\.identifier) == ["home", "office"])
        #expect(answered.log.contains { $0.message.contains(#"alice/phone: add of the fence "office" by a command on geotify/cmd/alice/phone"#) })
        let twice = lane.write(lane.command("alice/phone", #"{"action":"add","fence":\#(Self.office)}"#))
        #expect(code(twice.reply("alice/phone")) == "duplicate_identifier")
    }

    /// A command the broker delivers retained (it had stored it, and sends it again at
    /// every subscription) is refused before anything runs: executed, a retained delete
    /// would delete the fence again at every connection of the bridge, and a retained add
    /// would add back a fence deleted since. The same command sent live runs.
    @Test func aRetainedCommandIsRefusedAndNothingRuns() throws {
        var lane = try LaneFixture(fences: Self.fences)
        for json in [
            #"{"action":"add","id":"r1","fence":\#(Self.office)}"#,
            #"{"action":"delete","id":"r1","fence":"home","confirm":true}"#,
            #"{"action":"resetBadge","id":"r1"}"#,
            #"{"action":"list","id":"r1"}"#,
        ] {
            let retained = lane.command("alice/phone", json, retain: true)
            #expect(retained.fenceWrites.isEmpty, "nothing reaches the file")
            #expect(retained.saves.isEmpty && retained.outbox.isEmpty, "nothing changes")
            let reply = try #require(retained.reply("alice/phone"))
            #expect(code(reply) == "retained_command" && reply["id"] as? String == "r1")
            #expect((reply["error"] as? [String: Any])?["message"] as? String
                == "the command was published retained, so the broker sends it again at every connection of the bridge and it would run each time; nothing was done: publish commands without retain, and clear this one with an empty retained message on geotify/cmd/alice/phone")
            #expect(retained.counters[.commandsRefused(.retainedCommand)] == 1)
        }
        #expect(lane.book.fences(of: "alice/phone").map(\.identifier) == ["home"])
        let live = lane.write(lane.command("alice/phone", #"{"action":"delete","fence":"home","confirm":true}"#))
        #expect(live.reply("alice/phone")?["ok"] as? Bool == true)
        #expect(lane.book.fences(of: "alice/phone").isEmpty)
    }

    /// An edit is answered with the fence as it is now and as it was (`previous`), the
    /// app's Edit screen's before and after; an add has no `previous`.
    @Test func anEditIsAnsweredWithTheFenceAsItIsAndAsItWas() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let edited = try #require(lane.write(lane.command("alice/phone", #"{"action":"edit","fence":"home","changes":{"radius":200}}"#))
            .reply("alice/phone"))
        #expect(edited["ok"] as? Bool == true)
        #expect((edited["fence"] as? [String: Any])?["radius"] as? Int == 200)
        #expect((edited["previous"] as? [String: Any])?["radius"] as? Int == 100)
        #expect((edited["previous"] as? [String: Any])?["note"] as? String == "Welcome home")
        #expect(edited["warnings"] as? [String] == [])
        let added = try #require(lane.write(lane.command("alice/phone", #"{"action":"add","fence":\#(Self.office)}"#)).reply("alice/phone"))
        #expect((added["fence"] as? [String: Any])?["identifier"] as? String == "office")
        #expect(added["previous"] == nil)
    }

    /// A device whose changes kept the file being written for its `fenceWriteBudget` is
    /// refused further changes before they reach the file, each refusal saying when the
    /// next may come; reading and previewing cost nothing, other devices keep their own
    /// budget, and the clock gives time back.
    @Test func changesPastTheDevicesWritingTimeAreRefusedUntilTheClockGivesTimeBack() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.fenceWriteBudget = 1 }
        let changes = [
            #"{"action":"add","fence":\#(Self.office)}"#,
            #"{"action":"edit","fence":"office","changes":{"radius":200}}"#,
            #"{"action":"delete","fence":"office","confirm":true}"#,
            #"{"action":"add","fence":\#(Self.office)}"#,
        ]
        for change in changes {
            // Each write takes 0.3 s: the fourth starts with 0.1 s left and ends 0.2 s over.
            #expect(lane.write(lane.command("alice/phone", change), took: 0.3).reply("alice/phone")?["ok"] as? Bool == true)
        }
        // With the budget spent, what writes nothing is still answered.
        #expect(lane.command("alice/phone", #"{"action":"list"}"#).reply("alice/phone")?["ok"] as? Bool == true)
        #expect(lane.command("alice/phone", #"{"action":"get","fence":"home"}"#).reply("alice/phone")?["ok"] as? Bool == true)
        let preview = try #require(lane.command("alice/phone", #"{"action":"delete","fence":"office"}"#).reply("alice/phone"))
        let token = try #require(preview["token"] as? String, "a delete without confirm is a preview, which writes nothing")

        let refused = lane.command("alice/phone", #"{"action":"edit","fence":"office","changes":{"radius":300}}"#)
        #expect(refused.fenceWrites.isEmpty, "nothing reaches the file")
        let reply = try #require(refused.reply("alice/phone"))
        #expect(code(reply) == "rate_limited")
        #expect((reply["error"] as? [String: Any])?["message"] as? String
            == #"the fence changes of "alice/phone" kept the fence file being written for the 1 s a minute they may (fenceWriteBudget), while every other device waited; nothing was changed: the next change may come in 12 s"#)
        #expect(refused.counters[.commandsRefused(.rateLimited)] == 1)
        let commit = lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#)
        #expect(code(commit.reply("alice/phone")) == "rate_limited")
        #expect(lane.core.previewCount == 1, "a commit refused for the budget keeps its preview")

        let bob = lane.write(lane.command("bob/phone", #"{"action":"add","fence":\#(Self.office)}"#), took: 0.3)
        #expect(bob.reply("bob/phone")?["ok"] as? Bool == true, "another device has a budget of its own")

        _ = lane.advance(11)
        #expect(code(lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#).reply("alice/phone")) == "rate_limited")
        _ = lane.advance(2)
        let committed = lane.write(lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#), took: 0.3)
        #expect(committed.reply("alice/phone")?["committed"] as? String == "delete")
        #expect(lane.book.fences(of: "alice/phone").map(\.identifier) == ["home"])
    }

    @Test func aCommandCannotCreateADeviceNamedLikeTheSharedFences() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.commandDevices = ["#"] }
        let added = lane.write(lane.command("shared", #"{"action":"add","fence":\#(Self.office)}"#))
        #expect(code(added.reply("shared")) == "reserved_device")
        let previewed = lane.command("shared", #"{"action":"preview","change":{"action":"add","fence":\#(Self.office)}}"#)
        #expect(code(previewed.reply("shared")) == "reserved_device")
        #expect(lane.book.devices["shared"] == nil)
    }

    /// An own fence with the identifier of a fence shared with the device would leave a
    /// file that no longer loads: an add, a rename and a preview of either are refused.
    @Test func aCommandCannotGiveADeviceASharedFencesIdentifier() throws {
        let fences = """
            { "devices": { "alice/phone": [
                { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntry" } ] },
              "groups": { "family": ["alice/phone"] },
              "shared": [
                { "identifier": "office", "latitude": 52.5, "longitude": 13.3, "radius": 150, "eventType": "onEntry" },
                { "identifier": "school", "latitude": 52.6, "longitude": 13.2, "radius": 150, "eventType": "onEntry", "group": "family" } ] }
            """
        var lane = try LaneFixture(fences: fences)
        let previewed = lane.command("alice/phone", #"{"action":"preview","change":{"action":"add","fence":\#(Self.office)}}"#)
        #expect(code(previewed.reply("alice/phone")) == "duplicate_identifier")
        let previewedRename = lane.command("alice/phone", #"{"action":"preview","change":{"action":"edit","fence":"home","changes":{"identifier":"school"}}}"#)
        #expect(code(previewedRename.reply("alice/phone")) == "duplicate_identifier")
        let added = lane.write(lane.command("alice/phone", #"{"action":"add","fence":\#(Self.office)}"#)).reply("alice/phone")
        #expect(code(added) == "duplicate_identifier")
        #expect((added?["error"] as? [String: Any])?["message"] as? String
            == #"device "alice/phone" already has a fence "office", shared with every device; identifiers must be unique per device"#)
        let renamed = lane.write(lane.command("alice/phone", #"{"action":"edit","fence":"home","changes":{"identifier":"school"}}"#))
        #expect(code(renamed.reply("alice/phone")) == "duplicate_identifier")
        #expect(lane.book.fences(of: "alice/phone").map(\.identifier) == ["home"])
    }

    @Test func peekShowsTheEffectAndPopCommitsExactlyThat() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        let edit = #"{"action":"preview","change":{"action":"edit","fence":"home","changes":{"latitude":52.40,"radius":5}}}"#
        let peek = try #require(lane.command("alice/phone", edit).reply("alice/phone"))
        let preview = try #require(peek["preview"] as? [String: Any])
        #expect((preview["fence"] as? [String: Any])?["radius"] as? Double == 5, "as it would be stored")
        #expect((preview["relation"] as? [String: Any])?["state"] as? String == "outside")
        #expect(preview["warnings"] as? [String] == [])
        #expect(lane.book.fences(of: "alice/phone").first?.region == Region.circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100), "nothing changed yet")
        let token = try #require(peek["token"] as? String)
        let pop = lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#)
        #expect(pop.fenceWrites.first?.basis?.map(\.identifier) == ["home"])
        let reply = lane.write(pop).reply("alice/phone")
        #expect(reply?["committed"] as? String == "edit")
        #expect(lane.book.fences(of: "alice/phone").first?.region == Region.circle(center: Coordinate(latitude: 52.40, longitude: 13.405), radius: 5))
        let reused = lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#)
        #expect(code(reused.reply("alice/phone")) == "unknown_token", "a token is used once")
    }

    @Test func aPreviewOfAnEntryShowsTheNotificationTheNextFixWouldCause() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.40, 13.405)
        let move = #"{"action":"preview","change":{"action":"edit","fence":"home","changes":{"latitude":52.40}}}"#
        let preview = try #require(lane.command("alice/phone", move).reply("alice/phone")?["preview"] as? [String: Any])
        let notification = try #require(preview["notification"] as? [String: Any])
        #expect(notification["event"] as? String == "enter")
        #expect(notification["note"] as? String == "Welcome home")
    }

    /// A fence added around the device establishes its relation at the next fix, which
    /// comes later than the last: the preview shows the entry its initial trigger asks
    /// for, timed by the last fix, though a fix at the time of the one before would not
    /// establish it.
    @Test func aPreviewOfANewFenceShowsTheEntryItsInitialTriggerAsksFor() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.50, 13.30)
        let gym = #"{"identifier":"gym","latitude":52.50,"longitude":13.30,"radius":150,"note":"","eventType":"onEntry","initialTrigger":"enter"}"#
        let add = #"{"action":"preview","change":{"action":"add","fence":\#(gym)}}"#
        let preview = try #require(lane.command("alice/phone", add).reply("alice/phone")?["preview"] as? [String: Any])
        let notification = try #require(preview["notification"] as? [String: Any])
        #expect(notification["id"] as? String == "alice/phone/gym/enter/\(Int(lane.now))")
    }

    @Test func aCommitIsStaleOnlyWhenItsDevicesFencesChanged() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.commandDevices = ["#"] }
        let peek = lane.command("alice/phone", #"{"action":"preview","change":{"action":"add","fence":\#(Self.office)}}"#)
        let token = try #require(peek.reply("alice/phone")?["token"] as? String)
        _ = lane.write(lane.command("bob/phone", #"{"action":"add","fence":\#(Self.office)}"#))
        let other = lane.write(lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#))
        #expect(other.reply("alice/phone")?["ok"] as? Bool == true, "a change to another device does not make it stale")
        let second = lane.command("alice/phone", #"{"action":"preview","change":{"action":"delete","fence":"office"}}"#)
        let secondToken = try #require(second.reply("alice/phone")?["token"] as? String)
        _ = lane.write(lane.command("alice/phone", #"{"action":"edit","fence":"home","changes":{"note":"Hi"}}"#))
        let stale = lane.command("alice/phone", #"{"action":"commit","token":"\#(secondToken)"}"#)
        #expect(code(stale.reply("alice/phone")) == "stale")
        #expect(stale.fenceWrites.isEmpty)
    }

    @Test func deleteAsksForConfirmationAndCancelKeepsTheFence() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let asked = try #require(lane.command("alice/phone", #"{"action":"delete","fence":"home"}"#).reply("alice/phone"))
        #expect((asked["confirm"] as? String)?.contains("commit") == true)
        let token = try #require(asked["token"] as? String)
        let cancelled = lane.command("alice/phone", #"{"action":"cancel","token":"\#(token)"}"#).reply("alice/phone")
        #expect(cancelled?["cancelled"] as? Bool == true)
        #expect(lane.book.fences(of: "alice/phone").count == 1)
        let confirmed = lane.write(lane.command("alice/phone", #"{"action":"delete","fence":"home","confirm":true}"#))
        #expect(((confirmed.reply("alice/phone")?["deleted"]) as? [String: Any])?["identifier"] as? String == "home")
        #expect(lane.book.fences(of: "alice/phone").isEmpty)
    }

    @Test func previewsAreCappedPerDeviceOldestFirst() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.maximumPreviewsPerDevice = 2 }
        var tokens: [String] = []
        for _ in 0..<3 {
            let reply = lane.command("alice/phone", #"{"action":"preview","change":{"action":"delete","fence":"home"}}"#).reply("alice/phone")
            tokens.append(try #require(reply?["token"] as? String))
        }
        #expect(lane.core.previewCount == 2)
        #expect(code(lane.command("alice/phone", #"{"action":"cancel","token":"\#(tokens[0])"}"#).reply("alice/phone")) == "unknown_token")
        #expect(lane.command("alice/phone", #"{"action":"cancel","token":"\#(tokens[2])"}"#).reply("alice/phone")?["ok"] as? Bool == true)
    }

    @Test func responseTopicsMustLieUnderTheDevicesReplyTopic() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let allowed = lane.command("alice/phone", #"{"action":"list"}"#, responseTopic: "geotify/reply/alice/phone/app-7", correlationData: Array("c-1".utf8))
        let response = try #require(allowed.direct.first { $0.topic == "geotify/reply/alice/phone/app-7" })
        #expect(response.correlationData == Array("c-1".utf8))
        // "geotify/reply/alice/phone2" begins with the device's reply topic but is
        // another device's (alice/phone2).
        for hostile in [
            "owntracks/alice/phone/cmd", "homeassistant/sensor/evil/config", "geotify/event/van/7", "geotify/cmd/alice/phone",
            "geotify/reply/bob/phone", "geotify/reply/alice/phone2", "geotify/reply/alice/phone2/app",
        ] {
            let refused = lane.command("alice/phone", #"{"action":"list"}"#, responseTopic: hostile)
            #expect(refused.direct.map(\.topic) == ["geotify/reply/alice/phone"], "nothing is published to \(hostile)")
            #expect(code(refused.reply("alice/phone")) == "not_allowed")
        }
    }

    /// A response topic is read byte by byte, as the broker reads it: a wildcard hidden
    /// under a combining mark ("+\u{301}" is one character of Swift's) or a control
    /// character, which the broker refuses, refuses the command before it is carried
    /// out; a combining mark after the slash is a level below the reply topic like any
    /// other. (Found by `LaneCoreHostileInputTests`.)
    @Test func aResponseTopicTheBrokerWouldRefuseRefusesTheCommand() throws {
        var lane = try LaneFixture(fences: Self.fences)
        for hostile in ["+\u{301}", "#\u{308}", "app\u{1}", "app\u{9B}", "\u{0}", "app\n"] {
            let topic = "geotify/reply/alice/phone/" + hostile
            let refused = lane.command("alice/phone", #"{"action":"delete","fence":"home","confirm":true}"#, responseTopic: topic)
            #expect(refused.direct.map(\.topic) == ["geotify/reply/alice/phone"], "nothing is published to \(topic.debugDescription)")
            #expect(code(refused.reply("alice/phone")) == "not_allowed" && refused.fenceWrites.isEmpty)
        }
        let below = lane.command("alice/phone", #"{"action":"list"}"#, responseTopic: "geotify/reply/alice/phone/\u{301}app")
        #expect(below.direct.map(\.topic) == ["geotify/reply/alice/phone", "geotify/reply/alice/phone/\u{301}app"])
    }

    @Test func resetBadgeSavesAndRepublishes() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.40, 13.405)
        lane.now += 60
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        let reset = lane.command("alice/phone", #"{"action":"resetBadge"}"#)
        #expect(reset.saves["alice/phone"]?.badge == 0)
        // The tracker topic says home, as the entry published it: a badge does not change it.
        #expect(reset.outboxTopics == ["geotify/badge/alice/phone", "geotify/state/alice/phone"])
        #expect(reset.outboxText("geotify/badge/alice/phone") == "0")
        #expect(reset.reply("alice/phone")?["badge"] as? Int == 0)
    }

    /// Under `strictDevices` a device the file does not name has no state, also when
    /// `commandDevices` lets it command: its badge reset is refused as its positions are,
    /// and makes no state (which the next start would forget).
    @Test func underStrictDevicesABadgeResetMakesNoStateForADeviceTheFileDoesNotName() throws {
        var strict = try LaneFixture(fences: Self.fences) { $0.strictDevices = true; $0.commandDevices = ["#"] }
        let refused = strict.command("mallory/phone", #"{"action":"resetBadge"}"#)
        #expect(code(refused.reply("mallory/phone")) == "unknown_device")
        #expect(refused.saves.isEmpty && refused.outboxTopics.isEmpty)
        #expect(strict.core.state(of: "mallory/phone") == nil)
        let named = strict.command("bob/phone", #"{"action":"resetBadge"}"#)
        #expect(named.reply("bob/phone")?["ok"] as? Bool == true && named.saves["bob/phone"]?.badge == 0)
        var lax = try LaneFixture(fences: Self.fences) { $0.commandDevices = ["#"] }
        let made = lax.command("mallory/phone", #"{"action":"resetBadge"}"#)
        #expect(made.reply("mallory/phone")?["ok"] as? Bool == true && made.saves["mallory/phone"]?.badge == 0)
    }

    @Test func whoMayCommand() throws {
        var off = try LaneFixture(fences: Self.fences) { $0.commandsEnabled = false }
        #expect(code(off.command("alice/phone", #"{"action":"list"}"#).reply("alice/phone")) == "not_allowed")
        var lane = try LaneFixture(fences: Self.fences)
        #expect(code(lane.command("mallory/phone", #"{"action":"list"}"#).reply("mallory/phone")) == "not_allowed", "not in the fence file")
        let malformed = lane.command("alice/phone", #"{"action":"fly"}"#)
        #expect(code(malformed.reply("alice/phone")) == "unknown_action")
        #expect(malformed.direct.contains { $0.topic == "geotify/error" })
    }

    /// The badge reset is the device's own: a device the fence file names may reset its
    /// badge even when `commandDevices` does not let it manage fences, and a device the
    /// file does not name may not, so no state is made for it.
    @Test func aDeviceInTheFileMayResetItsBadgeWithoutManagingFences() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.commandDevices = ["bob/phone"] }
        #expect(code(lane.command("alice/phone", #"{"action":"list"}"#).reply("alice/phone")) == "not_allowed")
        let reset = lane.command("alice/phone", #"{"action":"resetBadge"}"#)
        #expect(reset.reply("alice/phone")?["ok"] as? Bool == true)
        #expect(reset.saves["alice/phone"]?.badge == 0)
        let stranger = lane.command("mallory/phone", #"{"action":"resetBadge"}"#)
        #expect(code(stranger.reply("mallory/phone")) == "not_allowed")
        #expect(stranger.saves.isEmpty && stranger.outbox.isEmpty)
        #expect(lane.core.state(of: "mallory/phone") == nil)
    }

    /// A prefix in `commandDevices` (`alice/#`) covers `alice` and the devices below it,
    /// not another owner whose name merely begins the same (`alice2/phone`).
    @Test func aPrefixInCommandDevicesStopsAtTheLevel() throws {
        let fences = #"{"devices": {"alice/phone": [], "alice": [], "alice2/phone": []}}"#
        var lane = try LaneFixture(fences: fences) { $0.commandDevices = ["alice/#"] }
        #expect(lane.command("alice/phone", #"{"action":"list"}"#).reply("alice/phone")?["ok"] as? Bool == true)
        #expect(lane.command("alice", #"{"action":"list"}"#).reply("alice")?["ok"] as? Bool == true)
        #expect(code(lane.command("alice2/phone", #"{"action":"list"}"#).reply("alice2/phone")) == "not_allowed")
    }

    /// `commandDevices` is compared byte by byte, as the broker compares the topics the
    /// devices write: a level below `alice/` that begins with a combining mark is below
    /// it, and a pattern in another normalization form names other devices.
    @Test func commandDevicesAreComparedByteByByte() throws {
        let fences = #"{"devices": {"alice/\u0301x": [], "zo\u00EB/watch": []}}"#
        var lane = try LaneFixture(fences: fences) { $0.commandDevices = ["alice/#", "zoe\u{308}/#"] }
        #expect(lane.command("alice/\u{301}x", #"{"action":"list"}"#).reply("alice/\u{301}x")?["ok"] as? Bool == true)
        #expect(code(lane.command("zo\u{EB}/watch", #"{"action":"list"}"#).reply("zo\u{EB}/watch")) == "not_allowed")
    }

    /// A fence identifier in another normalization form than the one it is compared
    /// with was the same fence to the bridge and another topic to the broker: renaming
    /// "cafe\u{301}" to "caf\u{E9}" changed nothing here, so its retained presence and
    /// Home Assistant sensor stayed on the old topic, "inside" after the device left.
    /// Such an identifier is refused wherever a command would write it.
    @Test func aFenceIdentifierNotInNormalizationFormCIsRefused() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let decomposed = #"{"identifier":"cafe\u0301","latitude":52.5,"longitude":13.3,"radius":150,"eventType":"onEntry"}"#
        let added = lane.write(lane.command("alice/phone", #"{"action":"add","fence":\#(decomposed)}"#))
        let reply = try #require(added.reply("alice/phone"))
        #expect(code(reply) == "invalid_value")
        #expect(((reply["error"] as? [String: Any])?["message"] as? String)?.contains("must be in Unicode normalization form C") == true)
        let renamed = lane.write(lane.command("alice/phone", #"{"action":"edit","fence":"home","changes":{"identifier":"cafe\u0301"}}"#))
        #expect(code(renamed.reply("alice/phone")) == "invalid_value")
        let previewed = lane.command("alice/phone", #"{"action":"preview","change":{"action":"add","fence":\#(decomposed)}}"#)
        #expect(code(previewed.reply("alice/phone")) == "invalid_value")
        #expect(lane.book.fences(of: "alice/phone").map(\.identifier) == ["home"])
        let composed = lane.write(lane.command("alice/phone", #"{"action":"add","fence":\#(decomposed.replacingOccurrences(of: "e\\u0301", with: "\\u00E9"))}"#))
        #expect(composed.reply("alice/phone")?["ok"] as? Bool == true)
        #expect(lane.book.fences(of: "alice/phone").map { Array($0.identifier.utf8) } == [Array("home".utf8), Array("caf\u{E9}".utf8)])
        #expect(throws: LaneFixture.FixtureError.self, "a fence file holding one does not load") {
            try LaneFixture.parse(#"{"devices": {"alice/phone": [\#(decomposed)]}}"#, settings: Settings())
        }
    }

    /// A command is counted as executed once, when it is answered: a list at once, an
    /// add when its write is answered (not when it is handed to the shell), a refused
    /// write as refused.
    @Test func aWrittenCommandIsCountedWhenItIsAnswered() throws {
        var lane = try LaneFixture(fences: Self.fences)
        #expect(lane.command("alice/phone", #"{"action":"list"}"#).counters[.commandsExecuted] == 1)
        let asked = lane.command("alice/phone", #"{"action":"add","fence":\#(Self.office)}"#)
        #expect(asked.counters[.commandsExecuted] == 0, "not yet written")
        let answered = lane.write(asked)
        #expect(answered.reply("alice/phone")?["ok"] as? Bool == true)
        #expect(answered.counters[.commandsExecuted] == 1)
        let twice = lane.write(lane.command("alice/phone", #"{"action":"add","fence":\#(Self.office)}"#))
        #expect(twice.counters[.commandsExecuted] == 0)
        #expect(twice.counters[.commandsRefused(.duplicateIdentifier)] == 1)
    }

    /// A commit is stale when a fence was added to the device since the preview, even
    /// though the fences the preview saw are all still there, unchanged.
    @Test func aCommitAfterAFenceWasAddedIsStale() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let peek = lane.command("alice/phone", #"{"action":"preview","change":{"action":"delete","fence":"home"}}"#)
        let token = try #require(peek.reply("alice/phone")?["token"] as? String)
        _ = lane.write(lane.command("alice/phone", #"{"action":"add","fence":\#(Self.office)}"#))
        let pop = lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#)
        #expect(code(pop.reply("alice/phone")) == "stale")
        #expect(pop.fenceWrites.isEmpty)
        #expect(lane.book.fences(of: "alice/phone").map(\.identifier) == ["home", "office"])
    }

    /// A token is its device's: another device may not commit or cancel it (it hears
    /// `unknown_token`, and nothing is written), and the device itself still can.
    @Test func anotherDeviceCannotUseAPreviewsToken() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let peek = lane.command("alice/phone", #"{"action":"preview","change":{"action":"delete","fence":"home"}}"#)
        let token = try #require(peek.reply("alice/phone")?["token"] as? String)
        let stolen = lane.command("bob/phone", #"{"action":"commit","token":"\#(token)"}"#)
        #expect(code(stolen.reply("bob/phone")) == "unknown_token")
        #expect(stolen.fenceWrites.isEmpty)
        #expect(code(lane.command("bob/phone", #"{"action":"cancel","token":"\#(token)"}"#).reply("bob/phone")) == "unknown_token")
        let own = lane.write(lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#))
        #expect(own.reply("alice/phone")?["committed"] as? String == "delete")
        #expect(lane.book.fences(of: "alice/phone").isEmpty)
    }

    /// Past `maximumPreviews` on the lane, across devices, the oldest preview goes: the
    /// lane keeps exactly that many.
    @Test func previewsAreCappedPerLaneOldestFirst() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.maximumPreviews = 2 }
        let delete = #"{"action":"preview","change":{"action":"delete","fence":"home"}}"#
        let add = #"{"action":"preview","change":{"action":"add","fence":\#(Self.office)}}"#
        let first = try #require(lane.command("alice/phone", delete).reply("alice/phone")?["token"] as? String)
        let second = try #require(lane.command("bob/phone", add).reply("bob/phone")?["token"] as? String)
        #expect(lane.core.previewCount == 2)
        let third = try #require(lane.command("bob/phone", add).reply("bob/phone")?["token"] as? String)
        #expect(lane.core.previewCount == 2)
        #expect(code(lane.command("alice/phone", #"{"action":"cancel","token":"\#(first)"}"#).reply("alice/phone")) == "unknown_token")
        for token in [second, third] {
            #expect(lane.command("bob/phone", #"{"action":"cancel","token":"\#(token)"}"#).reply("bob/phone")?["ok"] as? Bool == true)
        }
    }
}

/// Where a lane cuts a batch so that each command sees the fences as the commands before
/// it left them (their writes are made at the end of each part).
@Suite("Lane batch parts")
struct LaneBatchPartsTests {
    func inbound(_ device: String, command: Bool) -> Inbound {
        Inbound(
            route: command ? .command : .location(.plain), device: device,
            message: MQTTMessage(topic: command ? "geotify/cmd/\(device)" : "geotify/location/\(device)", payload: []),
            arrival: 0)
    }

    @Test func aBatchIsCutBeforeADevicesSecondCommand() {
        let batch = [
            inbound("a", command: true), inbound("b", command: true), inbound("a", command: false),
            inbound("a", command: true), inbound("c", command: true), inbound("b", command: true), inbound("a", command: true),
        ]
        #expect(LaneCore.parts(of: batch) == [0..<3, 3..<6, 6..<7])
    }

    @Test func positionsAndCommandsForDifferentDevicesAreOnePart() {
        let batch = [inbound("a", command: false), inbound("a", command: false), inbound("a", command: true), inbound("b", command: true)]
        #expect(LaneCore.parts(of: batch) == [0..<4])
        #expect(LaneCore.parts(of: []) == [0..<0])
    }
}
