import Foundation
import GeotifyBridge
import GeotifyCore
import GeotifyDelivery
import GeotifyJSON
import GeotifyStore
import GeotifyTime

/// `geotify notify test|status|retry`: tries a delivery target with a sample notification,
/// shows how each target's deliveries stand, and puts dead letters back in the queue.
/// `status` and `retry` work on the state database while a bridge runs; the bridge picks
/// up what `retry` put back within its poll interval.
enum NotifyCommand {
    static let help = """
        usage: geotify notify test TARGET [options]
               geotify notify status [--json] [options]
               geotify notify retry TARGET|all [options]

        test    sends a sample notification to TARGET (a target of the settings' "notify"
                section) at once, outside the queue, and prints the target's answer.
                Exits 0 when it was delivered, 1 when not.
        status  prints, per target, the deliveries acknowledged, pending, retrying and
                dead, those refused because the target's queue was full, the dead
                letters pruned past maximumDeadLetters, and the last error, from the
                state database.
        retry   puts the dead letters of TARGET (or of every target) back in the queue,
                with a fresh retry window.

        options:
        \(CommandOption.help(options))
        """

    static let options = SettingsOptions.options(["state-dir"]) + [
        CommandOption(name: "json", placeholder: nil, help: "status: print JSON instead of a table"),
    ]

    /// The actions, for usage errors.
    static let actions = ["test", "status", "retry"]

    static func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let action = words.first else { throw UsageError("notify needs test, status or retry", command: "notify") }
        let arguments = try Arguments(Array(words.dropFirst()), command: "notify", options: options)
        let chosen = try SettingsOptions.settings(arguments, flags: ["state-dir"], command: "notify")
        let settings = chosen.settings
        let database = (settings.stateDirectory as NSString).appendingPathComponent("state.sqlite")
        switch action {
        case "test":
            guard arguments.positionals.count == 1 else { throw UsageError("notify test needs one TARGET", command: "notify") }
            guard let file = chosen.file else {
                throw UsageError("notify test needs a settings file with \"notify\" targets: pass --config FILE", command: "notify")
            }
            let delivery: DeliverySettings
            do {
                delivery = try DeliverySettings.load(settingsFile: file)
            } catch {
                throw UsageError(error.message, command: "notify")
            }
            let name = arguments.positionals[0]
            guard let target = delivery.targets.first(where: { $0.name == name }) else {
                let known = delivery.targets.map(\.name).joined(separator: ", ")
                throw UsageError("no target named \"\(name)\" in \(file) (targets: \(known.isEmpty ? "none" : known))", command: "notify")
            }
            print("sending a sample notification to \(target.name) (\(target.destination.type))")
            let outcome = test(target, at: SystemScheduler().now, through: CurlTransport())
            print(describe(outcome))
            if case .delivered = outcome { return 0 }
            return 1
        case "status":
            try arguments.expectNoPositionals()
            let counts: [DeliveryCounts]
            do {
                counts = try openQueue(database).counts()
            } catch {
                Logger.standardError("geotify: \(error)")
                return 1
            }
            print(arguments.isSet("json") ? JSONWriter(pretty: true).string(json(counts)) : table(counts), terminator: "")
            return 0
        case "retry":
            guard arguments.positionals.count == 1 else { throw UsageError("notify retry needs one TARGET, or all", command: "notify") }
            let target = arguments.positionals[0]
            do {
                let count = try openQueue(database).retryDeadLetters(target: target == "all" ? nil : target, at: SystemScheduler().now)
                print("\(Counted(count, "dead letter")) of \(target == "all" ? "all targets" : target) back in the queue")
            } catch {
                Logger.standardError("geotify: \(error)")
                return 1
            }
            return 0
        default:
            let hint = NameSuggestion.nearest(to: action, in: actions).map { "did you mean \"\($0)\"? " } ?? ""
            throw UsageError("unknown notify action \"\(action)\" (\(hint)test, status or retry)", command: "notify")
        }
    }

    /// Sends a sample notification to `target` at `now`, outside the queue, and returns
    /// how it went: "Geotify test" entering the fence "test", with a note saying so.
    static func test(_ target: Target, at now: Double, through transport: DeliveryTransport) -> AttemptOutcome {
        let fence = Fence(
            identifier: "test", region: .circle(center: Coordinate(latitude: 52.5163, longitude: 13.3777), radius: 100),
            note: "A test notification from Geotify.", eventType: .onEntry)
        let fix = Fix(device: "geotify-test", coordinate: Coordinate(latitude: 52.5163, longitude: 13.3777), accuracy: 10, timestamp: now.rounded(.down))
        let notification = Notification(transition: Transition(fence: fence, kind: .enter, fix: fix), badge: 1)
        return target.attempt(OutboundMessages(topics: Topics()).event(notification).payload, at: now, through: transport)
    }

    /// An outcome as `notify test` prints it.
    static func describe(_ outcome: AttemptOutcome) -> String {
        switch outcome {
        case .delivered(let answer): "delivered: \(answer)"
        case .failed(let reason, let retryAfter): "failed, would be retried\(retryAfter.map { " after \(JSONWriter.text(of: $0)) s" } ?? ""): \(reason)"
        case .rejected(let reason): "refused, would be dead-lettered: \(reason)"
        }
    }

    /// The counts as a table, one target a line, numbers right-aligned.
    static func table(_ counts: [DeliveryCounts]) -> String {
        guard !counts.isEmpty else { return "no deliveries yet\n" }
        let header = ["target", "delivered", "pending", "retrying", "dead", "refused", "pruned", "last error"]
        let rows = counts.map { count in
            [count.target, String(count.delivered), String(count.pending), String(count.retrying), String(count.dead),
             String(count.refused), String(count.pruned),
             count.lastError.map { error in
                 count.lastErrorAt.map { "\(CalendarTime(seconds: $0).iso8601) \(error)" } ?? error
             } ?? "-"]
        }
        let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                if column == header.count - 1 { return cell }
                return (1...6).contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// The counts as JSON: `{"<target>": {"delivered", "pending", "retrying", "dead", "refused", "pruned", "lastError",
    /// "lastErrorAt"}}`.
    static func json(_ counts: [DeliveryCounts]) -> JSON {
        var object = JSONObject()
        for count in counts {
            object[count.target] = [
                "delivered": .number(Double(count.delivered)), "pending": .number(Double(count.pending)),
                "retrying": .number(Double(count.retrying)), "dead": .number(Double(count.dead)),
                "refused": .number(Double(count.refused)), "pruned": .number(Double(count.pruned)),
                "lastError": count.lastError.map { .string($0) } ?? .null,
                "lastErrorAt": count.lastErrorAt.map { .number($0) } ?? .null,
            ]
        }
        return .object(object)
    }

    /// The delivery queue of the state database at `path`, which must exist.
    private static func openQueue(_ path: String) throws(StoreError) -> DeliveryQueue {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError("open \(path)", "there is no state database (has the bridge run with this --state-dir?)")
        }
        return try DeliveryQueue(path: path)
    }
}
