import Foundation
import GeotifyConsole
import GeotifyCore
import GeotifyJSON
import GeotifyStore
import GeotifyTime
import Synchronization

/// A small in-memory stand-in for the bridge behind the web console, for the console's
/// tests and the browser harness until they run against the real bridge.
///
/// It keeps its fences in a real fence file (changed through `FenceFile`, as the CLI and
/// the bridge change it, so the test can read what the page did), evaluates OwnTracks
/// positions posted to `/pub` by plain containment (entry and exit, with the badge), and
/// answers fence commands with the bridge's JSON shapes: preview tokens that commit
/// exactly what was previewed and are refused as `stale` when the file changed, delete
/// without `confirm` as a preview; a device the fence file stops naming is forgotten
/// when the file is next read (`reloadFences`, or any request that reads the fences). It
/// is not the bridge: no lanes, no accuracy or hysteresis rules, no MQTT. `health` and
/// counters can be set by a test (`setHealth`, `add`).
package final class FixtureBridge: ConsoleBackend {
    private struct Device {
        var position: DeviceSnapshot.Position?
        var badge = 0
        var inside: [String] = []
    }

    private struct Preview {
        var device: String
        /// "add", "edit" or "delete".
        var name: String
        var change: FenceChange
        var contents: [UInt8]
        var expires: Double
    }

    private struct State {
        var devices: [String: Device] = [:]
        var previews: [String: Preview] = [:]
        var counters: [String: Int] = [:]
        var sinks: [@Sendable (ConsoleUpdate) -> Void] = []
        var health = ConsoleHealth(checks: [
            .init(name: "broker", ok: true, detail: "connected (fixture)"),
            .init(name: "store", ok: true, detail: "writable (fixture)"),
            .init(name: "fences", ok: true, detail: "loaded"),
        ])
        var nextToken = 0
        /// The book last read and the bytes it was read from: one edition while the file
        /// is unchanged, as the bridge's book in force is (`fenceBook()`).
        var book: (contents: [UInt8], book: FenceBook)?
    }

    package let file: FenceFile
    let scheduler: any Scheduler
    /// Seconds a preview's token lives.
    package let previewTimeout: Double
    private let state = Mutex(State())

    /// A fixture over the fence file at `path` (created on the first change when missing).
    package init(fencesPath: String, scheduler: any Scheduler, limits: FenceLimits = FenceLimits(), previewTimeout: Double = 300) {
        file = FenceFile(path: fencesPath, limits: limits)
        self.scheduler = scheduler
        self.previewTimeout = previewTimeout
    }

    /// Replaces what `health()` answers.
    package func setHealth(_ health: ConsoleHealth) {
        state.withLock { $0.health = health }
    }

    /// Counts `name` as the bridge's `Counters` would (the console's HTTP counters come here).
    package func add(_ name: String) {
        state.withLock { $0.counters[name, default: 0] += 1 }
    }

    /// The counter `name`.
    package func counter(_ name: String) -> Int {
        state.withLock { $0.counters[name] ?? 0 }
    }

    // MARK: - ConsoleBackend

    package func devices() -> [DeviceSnapshot] {
        state.withLock { state in
            state.devices.map { DeviceSnapshot(device: $0.key, position: $0.value.position, badge: $0.value.badge, inside: $0.value.inside) }
        }
    }

    package func fenceBook() -> FenceBook {
        read().book
    }

    package func run(command payload: [UInt8], device: String, reply: @escaping @Sendable (JSON) -> Void) {
        var object = JSONObject()
        let parsed = try? JSONParser(maxDepth: 16).parse(payload)
        if let id = parsed?["id"]?.stringValue { object["id"] = .string(id) }
        if let action = parsed?["action"]?.stringValue { object["action"] = .string(action) }
        do throws(FixtureRefusal) {
            guard let parsed else { throw FixtureRefusal("invalid_json", "the command is not JSON") }
            guard case .object(let command) = parsed else { throw FixtureRefusal("not_an_object", "a command must be a JSON object") }
            let result = try execute(command, device: device)
            object["ok"] = true
            object.members += result.members
            add("commands_executed")
        } catch {
            object["ok"] = false
            object["error"] = ["code": .string(error.code), "message": .string(error.message)]
            add("commands_refused.\(error.code)")
        }
        reply(.object(object))
    }

    package func publish(owntracks payload: [UInt8], user: String, device: String, reply: @escaping @Sendable (Result<[JSON], ConsoleRefusal>) -> Void) {
        add("messages_received")
        guard let json = try? JSONParser(maxDepth: 16).parse(payload), case .object(let message) = json else {
            add("errors.invalid_json")
            return reply(.failure(ConsoleRefusal(.invalidJSON, "the message is not a JSON object")))
        }
        guard message["_type"]?.stringValue == "location" else { return reply(.success([])) }
        guard let latitude = message["lat"]?.numberValue, let longitude = message["lon"]?.numberValue,
              (-90...90).contains(latitude), (-180...180).contains(longitude)
        else {
            add("errors.out_of_range")
            return reply(.failure(ConsoleRefusal(.outOfRange, "lat and lon must be numbers within -90...90 and -180...180")))
        }
        let position = DeviceSnapshot.Position(
            latitude: latitude, longitude: longitude, accuracy: message["acc"]?.numberValue,
            timestamp: message["tst"]?.numberValue ?? scheduler.now.rounded())
        evaluate("\(user)/\(device)", at: position)
        reply(.success([]))
    }

    package func importFences(_ plan: FenceImportPlan, reply: @escaping @Sendable (Result<FenceImportPlan.Outcome, ConsoleRefusal>) -> Void) {
        do {
            let outcome = try plan.write(to: file)
            notify(.fencesChanged)
            reply(.success(outcome))
        } catch {
            reply(.failure(ConsoleRefusal(error.code, error.message)))
        }
    }

    package func health() -> ConsoleHealth {
        state.withLock { $0.health }
    }

    package func metrics() -> ConsoleMetrics {
        let book = fenceBook()
        let (counters, devices) = state.withLock { ($0.counters, $0.devices.count) }
        return ConsoleMetrics(
            counters: counters, devices: devices, fences: book.fenceCount, uptime: scheduler.uptime,
            latency: ConsoleMetrics.Latency(upperBounds: [0.001, 0.01, 0.1], counts: [3, 1, 0], count: 4, sum: 0.0125))
    }

    package func observe(_ sink: @escaping @Sendable (ConsoleUpdate) -> Void) {
        state.withLock { $0.sinks.append(sink) }
    }

    // MARK: - The fence file

    /// Reads the fence file again now, as the bridge does on SIGHUP, and reports a
    /// change of it.
    package func reloadFences() {
        if read().changed { notify(.fencesChanged) }
    }

    /// The book in the fence file, read again when its bytes changed (and whether they
    /// did). As the bridge does, a new book that no longer names a device the earlier
    /// one named forgets it, and says so; a file that does not validate is an empty book
    /// that forgets nobody.
    private func read() -> (book: FenceBook, changed: Bool) {
        let loaded = file.load()
        let (book, changed, forgotten) = state.withLock { state -> (FenceBook, Bool, [String]) in
            if let kept = state.book, kept.contents == loaded.contents { return (kept.book, false, []) }
            let book = loaded.book ?? FenceBook()
            var forgotten: [String] = []
            if let earlier = state.book?.book, loaded.book != nil {
                forgotten = state.devices.keys.filter { earlier.knows($0) && !book.knows($0) }.sorted()
                for device in forgotten { state.devices[device] = nil }
            }
            state.book = (loaded.contents, book)
            return (book, true, forgotten)
        }
        for device in forgotten { notify(.deviceForgotten(device)) }
        return (book, changed)
    }

    // MARK: - Evaluation

    /// Moves `device` to `position`, with entry and exit notifications by containment.
    private func evaluate(_ device: String, at position: DeviceSnapshot.Position) {
        let book = fenceBook()
        let fences = book.deviceFences(of: device)
        let point = Coordinate(latitude: position.latitude, longitude: position.longitude)
        let all = fences.own + fences.shared.flatMap(\.fences)
        let inside = all.filter { $0.contains(point) }.map(\.identifier)
        var notifications: [JSON] = []
        let snapshot = state.withLock { state -> DeviceSnapshot in
            var entry = state.devices[device] ?? Device()
            let before = Set(entry.inside)
            let seenBefore = entry.position != nil
            for fence in all {
                let now = inside.contains(fence.identifier)
                guard seenBefore, now != before.contains(fence.identifier) else { continue }
                let kind: TransitionKind = now ? .enter : .exit
                guard fence.eventType.notifies(kind) else { continue }
                entry.badge += 1
                let event = now ? "enter" : "exit"
                var notification = JSONObject()
                notification["id"] = .string("\(device)/\(fence.identifier)/\(event)/\(Int(position.timestamp))")
                notification["device"] = .string(device)
                notification["fence"] = .string(fence.identifier)
                notification["event"] = .string(event)
                notification["event_type"] = .string(event)
                notification["note"] = .string(fence.note)
                notification["badge"] = .number(Double(entry.badge))
                notification["lat"] = .number(position.latitude)
                notification["lon"] = .number(position.longitude)
                if let accuracy = position.accuracy { notification["acc"] = .number(accuracy) }
                notification["tst"] = .number(position.timestamp)
                notifications.append(.object(notification))
            }
            entry.position = position
            entry.inside = inside
            state.devices[device] = entry
            state.counters["fixes_evaluated", default: 0] += 1
            state.counters["notifications", default: 0] += notifications.count
            return DeviceSnapshot(device: device, position: position, badge: entry.badge, inside: inside)
        }
        notify(.device(snapshot))
        notifications.forEach { notify(.notification($0)) }
    }

    private func notify(_ update: ConsoleUpdate) {
        for sink in state.withLock({ $0.sinks }) { sink(update) }
    }

    // MARK: - Commands

    private func execute(_ command: JSONObject, device: String) throws(FixtureRefusal) -> JSONObject {
        guard let action = command["action"]?.stringValue else { throw FixtureRefusal("missing_field", "missing \"action\"") }
        var result = JSONObject()
        switch action {
        case "list":
            result["fences"] = .array(fenceBook().fences(of: device).map(FenceCodec.encode))
        case "get":
            let identifier = try string(command, "fence")
            guard let fence = fenceBook().fences(of: device).first(where: { $0.identifier == identifier }) else {
                throw FixtureRefusal("unknown_fence", "device \"\(device)\" has no fence \"\(identifier)\"")
            }
            result["fence"] = FenceCodec.encode(fence)
        case "add", "edit":
            let applied = try apply(change(action, command, device: device), expecting: nil)
            result["fence"] = applied.fence.map(FenceCodec.encode) ?? .null
            result["warnings"] = .array(applied.warnings.map { .string($0.description) })
        case "delete" where command["confirm"]?.boolValue == true:
            let applied = try apply(change(action, command, device: device), expecting: nil)
            result["deleted"] = applied.previous.map(FenceCodec.encode) ?? .null
        case "delete":
            result = try preview(change("delete", command, device: device), name: "delete", device: device)
            result["confirm"] = "this deletes the fence: commit to delete it, or cancel to keep it"
        case "preview":
            guard let proposal = command["change"]?.objectValue, let name = proposal["action"]?.stringValue else {
                throw FixtureRefusal("missing_field", "missing \"change\" with an \"action\"")
            }
            result = try preview(change(name, proposal, device: device), name: name, device: device)
        case "commit":
            let preview = try take(try string(command, "token"), device: device)
            let applied = try apply(preview.change, expecting: preview.contents)
            result["committed"] = .string(preview.name)
            result["fence"] = (applied.fence ?? applied.previous).map(FenceCodec.encode) ?? .null
        case "cancel":
            _ = try take(try string(command, "token"), device: device)
            result["cancelled"] = true
        case "resetBadge":
            let snapshot = state.withLock { state -> DeviceSnapshot in
                var entry = state.devices[device] ?? Device()
                entry.badge = 0
                state.devices[device] = entry
                return DeviceSnapshot(device: device, position: entry.position, badge: 0, inside: entry.inside)
            }
            notify(.device(snapshot))
            result["badge"] = 0
        default:
            throw FixtureRefusal("unknown_action", "unknown action \"\(action)\"")
        }
        return result
    }

    private func change(_ action: String, _ object: JSONObject, device: String) throws(FixtureRefusal) -> FenceChange {
        switch action {
        case "add":
            guard let fence = object["fence"], fence.objectValue != nil else { throw FixtureRefusal("missing_field", "missing \"fence\"") }
            return .add(device: device, fence: fence)
        case "edit":
            guard let changes = object["changes"]?.objectValue else { throw FixtureRefusal("missing_field", "missing \"changes\"") }
            return .edit(device: device, identifier: try string(object, "fence"), fields: changes)
        case "delete":
            return .delete(device: device, identifier: try string(object, "fence"))
        default:
            throw FixtureRefusal("unknown_action", "a preview is of an add, edit or delete, not \"\(action)\"")
        }
    }

    private func preview(_ change: FenceChange, name: String, device: String) throws(FixtureRefusal) -> JSONObject {
        let applied: FenceChange.Applied
        let contents: [UInt8]
        do {
            (applied, contents) = try file.preview(change)
        } catch {
            throw FixtureRefusal(error.code.rawValue, error.message)
        }
        let now = scheduler.now
        let token = state.withLock { state -> String in
            state.nextToken += 1
            let token = String(format: "%016llx", UInt64(state.nextToken) &* 0x9E37_79B9_7F4A_7C15)
            state.previews[token] = Preview(device: device, name: name, change: change, contents: contents, expires: now + previewTimeout)
            return token
        }
        var preview = JSONObject()
        preview["change"] = .string(name)
        preview["fence"] = (applied.fence ?? applied.previous).map(FenceCodec.encode) ?? .null
        if name == "edit" { preview["previous"] = applied.previous.map(FenceCodec.encode) ?? .null }
        preview["relation"] = ["state": "unknown"]
        preview["notification"] = .null
        preview["warnings"] = .array(applied.warnings.map { .string($0.description) })
        var result = JSONObject()
        result["preview"] = .object(preview)
        result["token"] = .string(token)
        result["expires"] = .number(now + previewTimeout)
        return result
    }

    private func take(_ token: String, device: String) throws(FixtureRefusal) -> Preview {
        let now = scheduler.now
        let preview = state.withLock { state -> Preview? in
            guard let preview = state.previews[token], preview.device == device else { return nil }
            state.previews[token] = nil
            return preview
        }
        guard let preview else { throw FixtureRefusal("unknown_token", "no preview with the token \"\(token)\" for device \"\(device)\"") }
        guard preview.expires > now else { throw FixtureRefusal("expired_token", "the preview \"\(token)\" expired; preview again") }
        return preview
    }

    private func apply(_ change: FenceChange, expecting contents: [UInt8]?) throws(FixtureRefusal) -> FenceChange.Applied {
        do {
            let applied = try file.apply(change, expecting: contents).applied
            notify(.fencesChanged)
            return applied
        } catch {
            throw FixtureRefusal(
                error.code.rawValue,
                error.code == .stale && contents != nil ? "the fences changed since the preview; nothing was changed: preview again" : error.message)
        }
    }

    private func string(_ object: JSONObject, _ key: String) throws(FixtureRefusal) -> String {
        guard let value = object[key] else { throw FixtureRefusal("missing_field", "missing \"\(key)\"") }
        guard let text = value.stringValue else { throw FixtureRefusal("wrong_type", "\"\(key)\" must be a string") }
        return text
    }
}
