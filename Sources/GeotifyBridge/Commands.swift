import Foundation
import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Carries out fence requests on `geotify/cmd/<device>` for the devices of one lane, on
/// that lane (so a preview sees the device's state as evaluation leaves it), and builds
/// the replies.
///
/// A preview (the Peek) computes what a change would do without doing it: the fence as
/// it would be stored, the device's relation to it from its last fix, and the
/// notification its next fix would cause there; it answers with a token. A commit
/// (the Pop) applies exactly that change, provided the fence file still holds what the
/// preview read; otherwise it is `stale`. Tokens expire after `previewTimeout`.
///
/// Not thread-safe: used only on its lane's queue.
final class Commands {
    /// A previewed change waiting for its commit or cancel.
    private struct Preview {
        var change: FenceChange
        var contents: [UInt8]
        var expires: Double
        var device: String
    }

    private let environment: Lane.Environment
    private var previews: [String: Preview] = [:]

    init(environment: Lane.Environment) {
        self.environment = environment
    }

    /// Runs `command` for `device` (whose current state is `state`) and returns the
    /// reply's result members, or throws the refusal to reply with.
    func run(_ command: Command, device: String, state: DeviceState?) throws(CommandRefusal) -> JSONObject {
        let now = environment.now()
        previews = previews.filter { $0.value.expires > now - environment.settings.previewTimeout }
        let fences = environment.fences
        var result = JSONObject()
        switch command.action {
        case .resetBadge:
            preconditionFailure("the lane resets badges itself")
        case .list:
            let list = fences.book.fences(of: device)
            result["fences"] = .array(list.map(FenceCodec.encode))
        case .get(let identifier):
            guard let fence = fences.book.fences(of: device).first(where: { $0.identifier == identifier }) else {
                throw CommandRefusal(FenceChangeError.unknownFence(identifier, device: device, existing: fences.book.fences(of: device)))
            }
            result["fence"] = FenceCodec.encode(fence)
            result["relation"] = relation(of: state, to: fence)
        case .add(let fence):
            let applied = try apply(.add(device: device, fence: fence))
            result["fence"] = applied.fence.map(FenceCodec.encode) ?? .null
            result["warnings"] = warnings(applied)
        case .edit(let identifier, let changes):
            let applied = try apply(.edit(device: device, identifier: identifier, fields: changes))
            result["fence"] = applied.fence.map(FenceCodec.encode) ?? .null
            result["previous"] = applied.previous.map(FenceCodec.encode) ?? .null
            result["warnings"] = warnings(applied)
        case .delete(let identifier, true):
            let applied = try apply(.delete(device: device, identifier: identifier))
            result["deleted"] = applied.previous.map(FenceCodec.encode) ?? .null
        case .delete(let identifier, false):
            result = try preview(.delete(fence: identifier), device: device, state: state, now: now)
            result["confirm"] = "this deletes the fence: send {\"action\": \"commit\", \"token\": ...} to delete it, or {\"action\": \"cancel\", \"token\": ...} to keep it"
        case .preview(let proposal):
            result = try preview(proposal, device: device, state: state, now: now)
        case .commit(let token):
            let preview = try take(token, device: device, now: now)
            let applied: FenceChange.Applied
            do {
                applied = try fences.apply(preview.change, expecting: preview.contents)
            } catch {
                throw CommandRefusal(error.code == .stale
                    ? FenceChangeError(.stale, "the fences changed since the preview (\(error.message)); nothing was changed: preview again")
                    : error)
            }
            result["committed"] = .string(Self.name(of: preview.change))
            result["fence"] = (applied.fence ?? applied.previous).map(FenceCodec.encode) ?? .null
        case .cancel(let token):
            _ = try take(token, device: device, now: now)
            result["cancelled"] = true
        }
        return result
    }

    /// Whether commands may manage `device`: the `commandDevices` allow-list (ids, or
    /// prefixes ending in `/#`, or `#` for all), or by default the devices in the fence
    /// file.
    func allows(_ device: String) -> Bool {
        guard let allowed = environment.settings.commandDevices else {
            return environment.fences.book.devices[device] != nil
        }
        return allowed.contains { pattern in
            if pattern == "#" { return true }
            if pattern.hasSuffix("/#") { return device.hasPrefix(String(pattern.dropLast())) || device == String(pattern.dropLast(2)) }
            return device == pattern
        }
    }

    private func apply(_ change: FenceChange) throws(CommandRefusal) -> FenceChange.Applied {
        do {
            let applied = try environment.fences.apply(change, expecting: nil)
            environment.logger.info("\(change.device): \(Self.name(of: change)) applied by a command")
            return applied
        } catch {
            throw CommandRefusal(error)
        }
    }

    /// The Peek: the change's effect, and a token to commit it.
    private func preview(_ proposal: Command.Proposal, device: String, state: DeviceState?, now: Double) throws(CommandRefusal) -> JSONObject {
        let change = proposal.change(for: device)
        let (applied, contents): (FenceChange.Applied, [UInt8])
        do {
            (applied, contents) = try environment.fences.preview(change)
        } catch {
            throw CommandRefusal(error)
        }
        let token = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let expires = now + environment.settings.previewTimeout
        previews[token] = Preview(change: change, contents: contents, expires: expires, device: device)

        var preview = JSONObject()
        preview["change"] = .string(proposal.name)
        let stored = applied.fence ?? applied.previous
        preview["fence"] = stored.map(FenceCodec.encode) ?? .null
        if case .edit = proposal { preview["previous"] = applied.previous.map(FenceCodec.encode) ?? .null }
        if let fence = applied.fence ?? applied.previous {
            let current = applied.book.fences(of: device).first { $0.identifier == fence.identifier }
            preview["relation"] = relation(of: state, to: current ?? fence)
        }
        preview["notification"] = notification(after: applied, device: device, state: state) ?? .null
        preview["warnings"] = warnings(applied)
        var result = JSONObject()
        result["preview"] = .object(preview)
        result["token"] = .string(token)
        result["expires"] = .number(expires)
        return result
    }

    /// The notification the device's next fix would cause for the changed fence, if it
    /// were where it was last seen: its last fix evaluated against the changed fences.
    private func notification(after applied: FenceChange.Applied, device: String, state: DeviceState?) -> JSON? {
        guard var state, let fix = state.lastFix, let fence = applied.fence ?? applied.previous else { return nil }
        let evaluator = Evaluator(rules: environment.settings.rules, acceptance: FixAcceptance(maximumAge: 0, maximumFutureSkew: .infinity))
        let evaluation = evaluator.evaluate(
            fix, fences: applied.book.deviceFences(of: device), revision: applied.book.revision, now: fix.timestamp, state: &state)
        guard let notification = evaluation.notifications.first(where: { $0.fence == fence.identifier }) else { return nil }
        return (try? JSONParser().parse(environment.messages.event(notification).payload)) ?? .null
    }

    /// The device's relation to `fence` from its last fix: inside, outside or unknown
    /// (no fix, or one too close to the edge to be sure), and the distance to the edge
    /// in metres (negative inside).
    private func relation(of state: DeviceState?, to fence: Fence) -> JSON {
        guard let fix = state?.lastFix else { return ["state": "unknown"] }
        let rules = Evaluator(rules: environment.settings.rules).rules(for: fence)
        let accuracy = rules.accuracyAware && rules.accepts(accuracy: fix.accuracy) ? (fix.accuracy ?? 0) : 0
        let containment = fence.region.containment(of: fix.coordinate, accuracy: accuracy, hysteresis: rules.hysteresis(forSize: fence.size))
        let name: String = switch containment.relation {
        case .inside: "inside"
        case .outside: "outside"
        case .uncertain: "unknown"
        }
        let distance = (fence.region.signedDistance(to: fix.coordinate) * 10).rounded() / 10
        return ["state": .string(name), "distanceToEdge": .number(distance), "fixTime": .number(fix.timestamp)]
    }

    private func take(_ token: String, device: String, now: Double) throws(CommandRefusal) -> Preview {
        guard let preview = previews[token], preview.device == device else {
            throw CommandRefusal(InputError(.unknownToken, "no preview with the token \"\(token)\" for device \"\(device)\" (tokens live for \(Int(environment.settings.previewTimeout)) s and are used once)"))
        }
        previews[token] = nil
        guard preview.expires > now else {
            throw CommandRefusal(InputError(.expiredToken, "the preview \"\(token)\" expired \(Int(now - preview.expires)) s ago; preview again"))
        }
        return preview
    }

    private func warnings(_ applied: FenceChange.Applied) -> JSON {
        .array(applied.warnings.map { .string($0.description) })
    }

    private static func name(of change: FenceChange) -> String {
        switch change {
        case .add: "add"
        case .edit: "edit"
        case .delete: "delete"
        case .append, .replaceAll: "import"
        }
    }
}
