import Foundation
import GeotifyCore

/// Moves each device's state from the state stores of N instances sharing the devices
/// to those of M (`geotify state reshard`), offline, so that after a change of the
/// number of instances every device's new owner starts from the state the old one
/// left: no enter is repeated, no exit lost, no badge reset.
///
/// A state only means something against the fence revisions of the store it lives in
/// (a device has seen the fences added up to its revision), and each store numbers its
/// revisions itself. So a moved device's revision is translated into its new store's
/// numbering (`translate`): the shared fences it had seen stay seen, those it had not
/// stay new to it, and its own fences' revisions, which only it uses, are rewritten to
/// fit. It keeps whether the fence file named the device when it was saved
/// (`StateStore.loadDevicesAndNames`): a move is no removal, and the new owner tells a device
/// removed from the file while the instances were stopped as the old one would.
///
/// Stores are written before they are emptied, so a reshard interrupted halfway can be
/// run again: a device found in two stores is taken from its old owner. Messages a
/// store being dropped decided but never handed to the broker go to instance 0's
/// outbox, with a record of the last one moved in the same transaction, so a run again
/// does not move them twice (which would publish them twice); a dropped store with
/// deliveries still queued for notification targets is refused (start its instance once
/// more under the old count until they are out).
package enum StateReshard {
    /// What a reshard did.
    package struct Report: Sendable, Equatable {
        /// Devices whose state moved to another store.
        package var moved = 0
        /// Devices whose state stayed where it was.
        package var kept = 0
        /// Undelivered outbox messages moved from dropped stores to instance 0's (by this run:
        /// not those a run that was interrupted moved).
        package var messagesMoved = 0
        /// The devices each new store holds.
        package var devices: [Int] = []
        /// The stores whose outbox hand-over mark was found damaged (`DamagedOutboxMark`).
        package var damagedMarks: [DamagedOutboxMark] = []
    }

    /// The fence revisions of one store: scope (a device, or `#<owner>` for a shared
    /// set) → identifier → revision, and the store's current revision.
    package struct Revisions: Sendable, Equatable {
        package var known: [String: [String: Int]]
        package var current: Int

        package init(known: [String: [String: Int]], current: Int) {
            self.known = known
            self.current = current
        }
    }

    /// Reshards the state directories `directories` (instance 0 first) from `from` to
    /// `to` instances: the first `from` must hold the old instances' states, and there
    /// must be `max(from, to)` of them (new ones are created). Every instance must be
    /// stopped: a directory locked by a running one (`StateDirectoryLock`) is refused.
    package static func run(directories: [String], from: Int, to: Int) throws(StoreError) -> Report {
        let old: ShardAssignment, new: ShardAssignment
        do {
            old = try ShardAssignment(index: 0, count: from)
            new = try ShardAssignment(index: 0, count: to)
        } catch {
            throw StoreError("reshard", error.message)
        }
        guard directories.count == max(from, to) else {
            throw StoreError("reshard", "\(from) → \(to) needs \(max(from, to)) state directories, instance 0 first; \(directories.count) given")
        }
        for (index, directory) in directories.enumerated() where index < from {
            guard FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("state.sqlite")) else {
                throw StoreError("reshard", "\(directory) holds no state.sqlite; is it the state directory of instance \(index)?")
            }
        }
        // Held until the reshard returns: no bridge, and no other reshard, can use a
        // directory meanwhile.
        var locks: [StateDirectoryLock] = []
        for directory in directories { locks.append(try StateDirectoryLock(directory: directory)) }
        defer { withExtendedLifetime(locks) {} }
        var stores: [StateStore] = []
        var states: [[String: DeviceState]] = []
        var named: [Set<String>] = []
        var revisions: [Revisions] = []
        for directory in directories {
            let store = try StateStore(directory: directory)
            stores.append(store)
            let devices = try store.loadDevicesAndNames()
            states.append(devices.states)
            named.append(devices.named)
            let loaded = try store.loadRevisions()
            revisions.append(Revisions(known: loaded.known, current: loaded.current))
        }
        for index in from..<max(from, to) where !states[index].isEmpty {
            let count = states[index].count
            throw StoreError(
                "reshard", "\(directories[index]) already holds \(Counted(count, "device state")), but instance \(index) did not exist among \(from)")
        }
        for index in to..<max(from, to) {
            let queued = try DeliveryQueue(path: stores[index].path).counts().reduce(0) { $0 + $1.pending + $1.retrying }
            guard queued == 0 else {
                throw StoreError(
                    "reshard",
                    "\(directories[index]) still has \(Counted(queued, "notification")) queued for delivery targets; run instance \(index) under \(from) instances until `geotify notify status` shows none, then reshard")
            }
        }

        var report = Report(devices: Array(repeating: 0, count: to), damagedMarks: stores.compactMap(\.damagedMark))
        var owners: [String: Int] = [:]
        for (index, devices) in states.enumerated() {
            for device in devices.keys {
                let previous = ShardAssignment.shard(of: device, among: old.count)
                if owners[device] == nil || index == previous { owners[device] = index }
            }
        }
        var arriving = Array(repeating: [(device: String, state: DeviceState, named: Bool)](), count: to)
        var ownRevisions = Array(repeating: [String: [String: Int]](), count: to)
        var targets = (0..<to).map { index in index < from ? revisions[index] : sharedOnly(revisions[0]) }
        var leaving = Array(repeating: [String](), count: stores.count)
        for (device, source) in owners {
            let target = ShardAssignment.shard(of: device, among: new.count)
            for (index, devices) in states.enumerated() where index != target && devices[device] != nil { leaving[index].append(device) }
            report.devices[target] += 1
            guard source != target, let state = states[source][device] else {
                report.kept += 1
                continue
            }
            let moved = translate(state, device: device, from: revisions[source], to: targets[target])
            arriving[target].append((device, moved.state, named[source].contains(device)))
            ownRevisions[target][device] = moved.own
            targets[target].current = max(targets[target].current, moved.current)
            report.moved += 1
        }

        // The messages of dropped stores not yet moved: those past what a run that was
        // interrupted recorded in instance 0's store as moved (in the transaction that
        // moved them), so a run again moves none twice.
        var sources: [Source] = []
        var dropped: [OutboxMessage] = []
        var notes: [String: Int64] = [:]
        for index in to..<max(from, to) {
            let key = "reshard-moved-from-\(try stores[index].identity())"
            let movedBefore = try stores[0].note(key)
            let pending = try stores[index].pendingMessages().filter { message in movedBefore.map { message.id > $0 } ?? true }
            if let last = pending.last { notes[key] = last.id }
            dropped += pending.map(\.message)
            sources.append(Source(index: index, key: key, movedThrough: pending.last?.id ?? movedBefore))
        }
        for target in 0..<to {
            let outbox = target == 0 ? dropped : []
            if !arriving[target].isEmpty || !outbox.isEmpty {
                try stores[target].save(devices: arriving[target], outbox: outbox, recording: target == 0 ? notes : [:])
            }
            try saveRevisions(of: stores[target], own: ownRevisions[target], shared: target < from ? [:] : targets[target].known, current: targets[target].current)
        }
        report.messagesMoved = dropped.count
        for (index, devices) in leaving.enumerated() where !devices.isEmpty {
            try stores[index].save(devices: [], forgetting: devices, outbox: [])
        }
        for source in sources {
            guard let movedThrough = source.movedThrough else { continue }
            let store = stores[source.index]
            let marks = store.watermark.read()
            try store.dropMessages(after: marks.handed)
            // Ids the store gives later are past the moved ones, so the record could
            // never skip a message of its own; then the record goes.
            if movedThrough > marks.handed {
                try store.watermark.write(OutboxWatermark.Marks(handed: movedThrough, acknowledged: marks.acknowledged))
            }
            try stores[0].removeNote(source.key)
        }
        return report
    }

    /// A dropped store whose undelivered messages move to instance 0's outbox: the key
    /// of the record of the move in instance 0's store, and the last id moved (in this
    /// run or one interrupted), nil when none was.
    private struct Source {
        var index: Int
        var key: String
        var movedThrough: Int64?
    }

    /// `state`, evaluated against `source`'s revisions, in the numbering of `target`:
    /// the state with its revision translated, the revisions its own fences get in the
    /// target, and the target's current revision after them.
    ///
    /// The translated revision is the highest target revision of a shared fence the
    /// device had seen, so what it had seen stays seen; when the two stores ordered
    /// their shared fences differently it is lowered below the first it had not seen,
    /// so no fence it never saw can notify as if it had (a seen one is then taken as
    /// new: its relation is established again, silently). The device's own fences get
    /// the translated revision if it had seen them, one more if not.
    package static func translate(
        _ state: DeviceState, device: String, from source: Revisions, to target: Revisions
    ) -> (state: DeviceState, own: [String: Int], current: Int) {
        let ownSource = source.known[device] ?? [:]
        guard let revision = state.revision else {
            return (state, ownSource.mapValues { _ in target.current + 1 }, target.current + 1)
        }
        var seen = 0
        var unseen = Int.max
        for (scope, fences) in source.known where scope.hasPrefix("#") {
            let inTarget = target.known[scope] ?? [:]
            for (identifier, added) in fences {
                guard let translated = inTarget[identifier] else { continue }
                if added <= revision {
                    seen = max(seen, translated)
                } else {
                    unseen = min(unseen, translated)
                }
            }
        }
        let translated = min(max(seen, 0), unseen - 1)
        var moved = state
        moved.revision = translated
        let own = ownSource.mapValues { added in added <= revision ? translated : translated + 1 }
        return (moved, own, max(target.current, translated + (own.values.contains(translated + 1) ? 1 : 0)))
    }

    /// Only the shared sets' revisions of `revisions`: what a new store starts from.
    private static func sharedOnly(_ revisions: Revisions) -> Revisions {
        Revisions(known: revisions.known.filter { $0.key.hasPrefix("#") }, current: revisions.current)
    }

    /// Writes the revisions of the devices in `own` and the shared scopes in `shared`
    /// (replacing what the store had for them) and the current revision.
    private static func saveRevisions(of store: StateStore, own: [String: [String: Int]], shared: [String: [String: Int]], current: Int) throws(StoreError) {
        let database = try Database(path: store.path)
        try database.transaction { () throws(StoreError) in
            let delete = try database.prepare("DELETE FROM fence_revision WHERE device = ?")
            let insert = try database.prepare("INSERT INTO fence_revision (device, fence, revision) VALUES (?, ?, ?)")
            for (scope, fences) in own.merging(shared, uniquingKeysWith: { device, _ in device }) {
                try delete.run([.text(scope)])
                for (fence, revision) in fences { try insert.run([.text(scope), .text(fence), .integer(Int64(revision))]) }
            }
            try database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('revision', ?)").run([.integer(Int64(current))])
        }
    }
}
