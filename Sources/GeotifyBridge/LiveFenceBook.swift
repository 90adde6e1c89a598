import Foundation
import GeotifyCore
import GeotifyStore
import Synchronization

/// The fences in force in a running bridge, and the file they come from.
///
/// The file is the source of truth: it is watched (its size, time and inode polled, and
/// now and then its contents, so an edit that keeps size and time is noticed too; and
/// on SIGHUP), and a changed file that validates is put in force at once, keeping each
/// device's state for fences whose identifier stays. A file that does not validate is
/// refused with every problem, reported once, and the last good fences stay in force. A
/// missing or unreadable file is reported at once, and changes by commands are refused
/// (`invalid_file`) until it is back, so one command can never replace everybody's
/// fences with its own.
///
/// Changes by commands come as batches of `FenceWrite`s: what they depend on is read
/// once (the file, or in a fence directory the devices' files and the shared file),
/// each change applied to its device's fences (refused on its own if the device's
/// fences are not what the command saw), the result written once, atomically, and put
/// in force.
/// Reading, parsing and writing happen outside the lock that guards the book in force,
/// so lanes reading `book` never wait for them; writers and reloads take turns.
///
/// The file may be a fence directory (`FenceFile.Layout.directory`): with several
/// instances sharing the devices, each reads the shared fences and its own devices'
/// files and writes only its own devices' files. A single fence file shared by several
/// instances is read-only to them (`read_only`), since none may write what the others
/// read.
final class LiveFenceBook: Sendable {
    /// The book in force and what it was made from.
    private struct Installed {
        var book = FenceBook()
        /// The fingerprint of each part of the bytes the book was read from (or written
        /// as; `FenceFile.fingerprints(of:)`): enough to tell whether the file still holds
        /// them, without keeping a copy of the file, and for a fence directory, which of
        /// its files a change must look at.
        var fingerprints: [String: FenceFileFingerprint] = [:]
        /// The file's size, modification time and inode when last looked at.
        var signature: [Int] = []
        /// Why the file cannot be used now (missing, unreadable), reported once; nil when it can.
        var unusable: String?
    }

    /// What a reload or write leaves to the caller: the books before and after, when a
    /// new one is in force.
    struct Change: Sendable {
        var old: FenceBook
        var new: FenceBook
        /// The only devices whose fences can differ between the books, when that is known:
        /// a command's write onto the book in force changes its devices' own fences and
        /// nothing else. Nil when anything may differ (a reload, a write onto a hand edit),
        /// so whoever announces the change compares the books.
        var devices: Set<String>? = nil
    }

    let file: FenceFile
    private let installed = Mutex(Installed())
    /// What the writers and reloads keep between turns.
    private struct Turn {
        /// The fingerprints of the last refused contents, so a bad file is reported once,
        /// not every poll.
        var refused: [String: FenceFileFingerprint]?
        /// Each device's text as last written, so a write encodes only changed devices.
        var text = FenceFileText()
    }

    /// Held while reading, validating and writing the file, so reloads and writes take
    /// turns; never held by readers of `book`.
    private let turn = Mutex(Turn())
    private let store: StateStore
    private let logger: Logger
    private let counters: Counters
    private let messages: OutboundMessages
    private let report: @Sendable (OutboxMessage) -> Void

    init(
        file: FenceFile, store: StateStore, logger: Logger, counters: Counters, messages: OutboundMessages,
        report: @escaping @Sendable (OutboxMessage) -> Void
    ) {
        self.file = file
        self.store = store
        self.logger = logger
        self.counters = counters
        self.messages = messages
        self.report = report
    }

    /// The fences in force.
    var book: FenceBook { installed.withLock { $0.book } }

    /// Why the file cannot be used now, nil when it can (for health reports).
    var problem: String? { installed.withLock { $0.unusable } }

    /// Loads the file at start, with the fence revisions persisted by earlier runs, so
    /// fences added while the bridge was down are new to every device.
    ///
    /// The fences are made with their revisions as the file is decoded (not decoded, then
    /// copied with them), so a large file's fences are not held twice at start.
    func load() throws(StartupError) {
        let revisions: FenceRevisions
        do {
            let persisted = try store.loadRevisions()
            revisions = FenceRevisions(known: persisted.known, current: persisted.current)
        } catch {
            throw StartupError(["cannot use the state directory: \(error)"])
        }
        var loaded = file.load(revisions: revisions)
        for warning in loaded.warnings { logger.warning("\(warning)") }
        guard let book = loaded.book else {
            throw StartupError(["the fence file \(file.path) is not valid:"] + loaded.errors.map { "  \($0)" })
        }
        let fingerprints = file.fingerprints(of: loaded.contents)
        // The file's bytes are not needed any more: let them go before saving the revisions.
        loaded.contents = []
        do {
            try store.saveRevisions(of: book)
        } catch {
            throw StartupError(["cannot use the state directory: \(error)"])
        }
        let signature = signature()
        installed.withLock {
            $0.book = book
            $0.fingerprints = fingerprints
            $0.signature = signature
        }
    }

    /// Looks at the file and puts it in force if it changed since it was last looked at:
    /// by its size, time and inode, or, with `readContents` (now and then, and on
    /// SIGHUP), by its contents. Reports a file that went missing or unreadable once.
    func reloadIfChanged(readContents: Bool = false) -> Change? {
        turn.withLock { turn -> Change? in
            let current = signature()
            let (known, unusable) = installed.withLock { ($0.signature, $0.unusable) }
            guard readContents || current != known || unusable != nil else { return nil }
            let contents: [UInt8]
            do throws(StoreError) {
                guard let read = try file.read() else {
                    markUnusable("the fence file \(file.path) is missing", signature: current)
                    return nil
                }
                contents = read
            } catch {
                markUnusable("the fence file \(file.path) cannot be read: \(error)", signature: current)
                return nil
            }
            markUsable()
            return install(contents, signature: current, reason: "the file changed", refused: &turn.refused)
        }
    }

    /// Writes the changes in `writes` to the file in one atomic write, each applied to
    /// its device's fences as they are in the file now and refused on its own when it
    /// does not apply (its device's fences are not those it was decided on, it does not
    /// validate); returns one outcome a write, and the change of book when any applied.
    /// In a fence directory a device whose file fails to be written (a full disk) fails
    /// alone (`io`): the other devices' files were written and are put in force.
    ///
    /// Only the parts the changes depend on are read (`FenceFile.change`): in a fence
    /// directory the devices' files and the shared file. While those hold what is in
    /// force, the changes apply to the book in force; otherwise the file as it is now is
    /// read and validated whole, and the changes apply to it, so a hand edit not looked
    /// at yet is kept. A fence directory's other files are not read: an edit there is
    /// put in force when the file is next looked at (the signature in force is kept
    /// when it changed before the write, so the next look reads the contents).
    func write(_ writes: [FenceWrite], limits: FenceLimits) -> (results: [Result<FenceChange.Outcome, FenceChangeError>], change: Change?) {
        turn.withLock { turn in
            let (inForce, inForcePrints, known, unusable) = installed.withLock { ($0.book, $0.fingerprints, $0.signature, $0.unusable) }
            func refuseAll(_ error: FenceChangeError) -> (results: [Result<FenceChange.Outcome, FenceChangeError>], change: Change?) {
                (Array(repeating: .failure(error), count: writes.count), nil)
            }
            if let unusable {
                return refuseAll(FenceChangeError(.invalidFile, "\(unusable); no change is written until it is back"))
            }
            if let shard = file.shard, file.layout == .file {
                return refuseAll(.readOnly(file.path, instances: shard.count))
            }
            let before = signature()
            var refusal: FenceChangeError?
            var results: [Result<FenceChange.Outcome, FenceChangeError>] = []
            // What the changes apply to: the book in force, or the file read whole again
            // (`reread`) when the parts they depend on are not what is in force.
            var (base, basePrints, reread) = (inForce, inForcePrints, false)
            var decided: (book: FenceBook, changed: [String])?
            // The devices' new fences, in case some of their files fail to be written.
            var changedFences: [String: [Fence]] = [:]
            let devices = Array(Set(writes.map(\.change.device))).sorted()
            // In a fence directory, the parts the change read: the others count with the
            // sizes the book was made from, against `maximumFenceFileBytes`.
            var readParts: Set<String> = []
            let otherBytes = { basePrints.reduce(0) { readParts.contains($1.key) ? $0 : $0 + $1.value.size } }
            var written: [String: [UInt8]?]
            var failed: [String: StoreError]
            do throws(StoreError) {
                (written, failed) = try file.change(devices: devices, text: &turn.text, otherBytes: otherBytes) { (parts) throws(StoreError) -> (book: FenceBook, changed: [String])? in
                    func missing() -> (book: FenceBook, changed: [String])? {
                        markUnusable("the fence file \(file.path) is missing", signature: [])
                        refusal = FenceChangeError(.invalidFile, "the fence file \(file.path) is missing; no change is written until it is back")
                        return nil
                    }
                    guard let parts else { return missing() }
                    readParts = Set(parts.keys)
                    let fresh = parts.allSatisfy { name, bytes in bytes.map { FenceFileFingerprint(of: $0) } == inForcePrints[name] }
                    if !fresh {
                        let contents: [UInt8]?
                        do throws(StoreError) {
                            contents = file.layout == .file ? parts[FenceFile.wholeFile] ?? nil : try file.read()
                        } catch {
                            throw file.unreadable(error)
                        }
                        guard let contents else { return missing() }
                        let parsed = file.parse(contents, revisions: FenceRevisions(of: inForce))
                        guard let book = parsed.book else {
                            refusal = .invalidFile(file.path, parsed.errors)
                            return nil
                        }
                        (base, basePrints, reread) = (book.inheriting(from: inForce), file.fingerprints(of: contents), true)
                    }
                    let applied = Self.apply(writes, to: base, limits: limits)
                    results = applied.results
                    guard !applied.changed.isEmpty else { return nil }
                    changedFences = applied.changed
                    decided = (base.replacing(devices: applied.changed), Array(applied.changed.keys))
                    return decided
                }
            } catch {
                let failure = if error.code == .stale {
                    FenceChangeError(.stale, "the fence file \(file.path) changed while it was being written (edited by someone else); nothing was written, try again")
                } else {
                    FenceChangeError(error.code ?? .io, error.description)
                }
                return results.isEmpty ? refuseAll(failure) : (results.map { $0.flatMap { _ in .failure(failure) } }, nil)
            }
            if let refusal { return refuseAll(refusal) }
            guard var decided else { return (results, nil) }
            if !failed.isEmpty {
                // In a fence directory a device whose file was not written fails alone: the
                // others' files were written, and their changes are put in force.
                for (index, write) in writes.enumerated() {
                    guard let error = failed[write.change.device], case .success = results[index] else { continue }
                    results[index] = .failure(FenceChangeError(.io, "\(error.description); nothing was changed"))
                }
                let kept = changedFences.filter { failed[$0.key] == nil }
                guard !kept.isEmpty else { return (results, nil) }
                decided = (base.replacing(devices: kept), Array(kept.keys))
            }
            var fingerprints = basePrints
            for (name, bytes) in written { fingerprints[name] = bytes.map { FenceFileFingerprint(of: $0) } }
            // The file was read whole (a single file always is): its signature now is
            // what is in force. Otherwise keep the old one if it moved before the write.
            let after = file.layout == .file || reread || before == known ? signature() : known
            // Onto a hand edit not looked at yet, any device's fences may have changed.
            let scopes = reread ? nil : decided.changed
            var change = put(decided.book, fingerprints: fingerprints, signature: after, reason: "changed by a command", scopes: scopes)
            change.devices = scopes.map(Set.init)
            turn.refused = nil
            return (results, change)
        }
    }

    /// The pure part of a turn of fence writes: each write applied in order to `base` as
    /// the writes before it left it; a write whose preview saw other fences than the
    /// device has now is `stale`, and none may create a device named like the shared
    /// fences or a group. Returns each write's outcome and the devices' new fences.
    static func apply(_ writes: [FenceWrite], to base: FenceBook, limits: FenceLimits) -> (results: [Result<FenceChange.Outcome, FenceChangeError>], changed: [String: [Fence]]) {
        var changed: [String: [Fence]] = [:]
        var results: [Result<FenceChange.Outcome, FenceChangeError>] = []
        for write in writes {
            let device = write.change.device
            let current = changed[device] ?? base.devices[device]
            if let basis = write.basis, !LaneCore.same(current ?? [], basis) {
                results.append(.failure(FenceChangeError(.stale, "the fences of \"\(device)\" changed since the preview (edited by someone else); nothing was changed: preview again")))
                continue
            }
            do throws(FenceChangeError) {
                let outcome = try write.change.apply(toFencesOf: current, in: base, limits: limits)
                changed[device] = outcome.fences
                results.append(.success(outcome))
            } catch {
                results.append(.failure(error))
            }
        }
        return (results, changed)
    }

    /// Validates `contents` and, if they are good and differ from what is in force, puts
    /// them in force; refuses them with every problem (once) otherwise.
    private func install(_ contents: [UInt8], signature: [Int], reason: String, refused: inout [String: FenceFileFingerprint]?) -> Change? {
        let fingerprints = file.fingerprints(of: contents)
        let inForce = installed.withLock { state -> FenceBook? in
            state.signature = signature
            return fingerprints == state.fingerprints ? nil : state.book
        }
        guard let inForce else {
            if refused != nil {
                logger.info("the fence file \(file.path) is valid again (as it was)")
                refused = nil
            }
            return nil
        }
        guard fingerprints != refused else { return nil }
        let loaded = file.parse(contents, revisions: FenceRevisions(of: inForce))
        guard let parsed = loaded.book else {
            refused = fingerprints
            refuse(loaded.errors)
            return nil
        }
        for warning in loaded.warnings { logger.warning("\(warning)") }
        if refused != nil {
            logger.info("the fence file \(file.path) is valid again")
            refused = nil
        }
        // Only the devices whose fences the edit changed are looked at again by the lanes.
        return put(parsed.inheriting(from: inForce), fingerprints: fingerprints, signature: signature, reason: reason, scopes: nil)
    }

    /// Puts `book` in force and saves its revisions (of `scopes` only, when given; else of
    /// every fence that differs from the book in force).
    private func put(_ book: FenceBook, fingerprints: [String: FenceFileFingerprint], signature: [Int], reason: String, scopes: [String]?) -> Change {
        do {
            if let scopes {
                try store.saveRevisions(of: book, devices: scopes)
            } else {
                try store.saveRevisions(of: book, since: installed.withLock { $0.book })
            }
        } catch {
            counters.add(.errors(.stateWrite))
            logger.error("could not save the fence revisions: \(error)")
        }
        let old = installed.withLock { state in
            defer {
                state.book = book
                state.fingerprints = fingerprints
                state.signature = signature
            }
            return state.book
        }
        counters.add(.fenceReloads)
        logger.info("fences reloaded (\(reason)): \(book.fenceCount) fences for \(book.devices.count) devices, revision \(book.revision)")
        return Change(old: old, new: book)
    }

    private func markUnusable(_ problem: String, signature: [Int]) {
        let first = installed.withLock { state in
            defer {
                state.unusable = problem
                state.signature = signature
            }
            return state.unusable != problem
        }
        guard first else { return }
        counters.add(.errors(.fenceFile))
        logger.error("\(problem); the fences in force stay, and commands that change fences are refused until it is back")
        report(messages.failure(.fenceFile, "\(problem); the fences in force stay, and commands that change fences are refused until it is back"))
    }

    private func markUsable() {
        let was = installed.withLock { state in
            defer { state.unusable = nil }
            return state.unusable
        }
        if was != nil { logger.info("the fence file \(file.path) is back") }
    }

    private func refuse(_ problems: [FenceProblem]) {
        counters.add(.errors(.fenceFile))
        logger.error("the fence file \(file.path) is not valid; keeping the fences in force:")
        for problem in problems { logger.error("  \(problem)") }
        // Named and counted as a refused change's message is, so one line stays short.
        let refusal = FenceChangeError.invalid(
            .fenceFile, "the fence file \(file.path) is not valid; the last good fences stay in force: ", problems)
        report(messages.failure(.fenceFile, refusal.message))
    }

    /// The file's size, modification time and inode, or empty when it cannot be read
    /// (for a fence directory, those of its parts: `FenceFile.signature`).
    private func signature() -> [Int] {
        file.signature()
    }
}
