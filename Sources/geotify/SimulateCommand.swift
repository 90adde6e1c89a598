import Foundation
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// `geotify simulate`: replays a recorded track through the same evaluator and rules as
/// the bridge, offline, and prints the notifications it would publish.
enum SimulateCommand {
    static let options = [
        CommandOption(name: "device", placeholder: "D", help: "the device the track belongs to (default: the only device in the fence file)"),
        CommandOption(name: "json", placeholder: nil, help: "print each notification as the JSON the bridge publishes"),
        CommandOption(name: "all", placeholder: nil, help: "print transitions that do not notify too (marked \"silent\")"),
        CommandOption(name: "no-rules", placeholder: nil, help: "replay with every transition rule off, for comparison"),
    ] + SettingsOptions.options(["fences"])

    static let help = """
        usage: geotify simulate TRACK [options]

        Replays TRACK (OwnTracks JSON lines, as the OwnTracks Recorder stores them;
        plain JSON positions; or GPX) through the evaluator with the fences (the
        device's own and the shared sets that apply to it) and the transition rules of
        the settings, and prints each notification the bridge would publish, with the
        time of the fix that caused it:

          2023-11-14T22:15:00Z  alice/phone  enter  home  badge 1  Welcome home

        A summary (fixes read, evaluated, dropped, transitions) goes to standard error.
        The clock is the track's own: fixes are never too old, only out of order.
        \(Track.gpxAccuracyRule)

        Exits 0 when fixes were evaluated, 1 when the track or the fence file cannot
        be read or no fix could be evaluated, 2 on a usage error (an unknown device).

        options:
        \(CommandOption.help(options))
        """

    static func run(_ words: [String]) throws(UsageError) -> Int32 {
        let arguments = try Arguments(words, command: "simulate", options: options)
        guard arguments.positionals.count == 1 else {
            throw UsageError(
                arguments.positionals.isEmpty ? "missing the track file" : "unexpected argument \"\(arguments.positionals[1])\"", command: "simulate")
        }
        let chosen = try SettingsOptions.settings(arguments, flags: ["fences"], command: "simulate")
        let settings = chosen.settings
        let loaded = FenceFile(path: settings.fencesPath, limits: settings.limits, maximumBytes: settings.maximumFenceFileBytes).load()
        for warning in loaded.warnings { Logger.standardError("warning: \(warning)") }
        guard let book = loaded.book?.revised(knownRevisions: [:], currentRevision: 0) else {
            for error in loaded.errors { Logger.standardError("error: \(error)") }
            if !FileManager.default.fileExists(atPath: settings.fencesPath), let hint = chosen.hint(missing: "fences") {
                Logger.standardError(hint)
            }
            return 1
        }
        let device = try device(arguments.value("device"), in: book)
        let path = arguments.positionals[0]
        let track: Track
        do {
            guard let bytes = try AtomicFile.read(path, within: .track) else {
                Logger.standardError("error: \(path): no such file")
                return 1
            }
            track = try Track(parsing: bytes, device: device, decoder: LocationDecoder(maximumPayloadBytes: settings.maximumPayloadBytes))
        } catch {
            Logger.standardError("error: \(path): \(error)")
            return 1
        }
        for problem in track.problems { Logger.standardError("warning: \(path): \(problem)") }

        let evaluator = Evaluator(
            rules: arguments.isSet("no-rules") ? .none : settings.rules,
            acceptance: FixAcceptance(maximumAge: 0, maximumFutureSkew: .infinity))
        let messages = OutboundMessages(topics: Topics(prefix: settings.topicPrefix))
        let fences = book.deviceFences(of: device)
        var state = DeviceState()
        var summary = (evaluated: 0, inaccurate: 0, dropped: 0, transitions: 0, notifications: 0)
        for fix in track.fixes {
            let evaluation = evaluator.evaluate(fix, fences: fences, revision: book.revision, now: fix.timestamp, state: &state)
            switch evaluation.outcome {
            case .evaluated, .advanced: summary.evaluated += 1
            case .inaccurate: summary.inaccurate += 1
            case .dropped: summary.dropped += 1
            }
            summary.transitions += evaluation.transitions.count
            summary.notifications += evaluation.notifications.count
            var notified = evaluation.notifications[...]
            for transition in evaluation.transitions {
                if let notification = notified.first, notification.transition == transition {
                    notified.removeFirst()
                    print(arguments.isSet("json") ? String(decoding: messages.event(notification).payload, as: UTF8.self) : line(transition, badge: notification.badge))
                } else if arguments.isSet("all") && !arguments.isSet("json") {
                    print(line(transition, badge: nil))
                }
            }
        }
        Logger.standardError("\(track.fixes.count) fixes: \(summary.evaluated) evaluated, \(summary.inaccurate) too inaccurate, \(summary.dropped) out of order; \(summary.transitions) transitions, \(summary.notifications) notifications")
        guard summary.evaluated > 0 else {
            Logger.standardError("error: \(path): no fix was evaluated\(track.fixes.isEmpty ? ": the track holds no usable fix" : "")")
            return 1
        }
        return 0
    }

    /// The device the track is replayed as: the one named, which the fence file must
    /// know, or the file's only device.
    private static func device(_ named: String?, in book: FenceBook) throws(UsageError) -> String {
        let known = Set(book.devices.keys).union(book.groups.values.joined()).sorted()
        let listed = known.isEmpty ? "none" : known.prefix(10).joined(separator: ", ") + (known.count > 10 ? " and \(known.count - 10) more" : "")
        guard let named else {
            guard known.count == 1 else {
                throw UsageError("the fence file has \(known.count) devices (\(listed)); say which one the track is with --device", command: "simulate")
            }
            return known[0]
        }
        guard book.knows(named) || book.shared[SharedFences.everyDevice] != nil else {
            let hint = NameSuggestion.nearest(to: named, in: known).map { "did you mean \"\($0)\"? " } ?? ""
            throw UsageError("the fence file has no device \"\(named)\" (\(hint)it has \(listed))", command: "simulate")
        }
        return named
    }

    private static func line(_ transition: Transition, badge: Int?) -> String {
        let time = Date(timeIntervalSince1970: transition.fix.timestamp).formatted(.iso8601)
        let outcome = badge.map { "badge \($0)" } ?? "silent"
        return [time, transition.fix.device, transition.kind.rawValue, transition.fence.identifier, outcome, transition.fence.note]
            .joined(separator: "  ")
    }
}
