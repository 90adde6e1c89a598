import Foundation
import GeotifyCore
import GeotifyStore
import Synchronization

/// The fences in force in a running bridge, and the file they come from.
///
/// The file is the source of truth: it is watched (its size, time and inode polled
/// every second, so editors that replace the file are noticed too; and on SIGHUP), and
/// a changed file that validates is applied at once, keeping each device's state for
/// fences whose identifier stays. A file that does not validate is refused with every
/// problem, reported once, and the last good fences stay in force. Changes made by
/// commands are written to the file and applied the same way.
final class LiveFenceBook: Sendable {
    private struct State {
        var book = FenceBook()
        /// The bytes the book was read from: commands check the file still holds them.
        var contents: [UInt8] = []
        /// The file's size, modification time and inode when last looked at.
        var signature: [Int] = []
        /// The last contents refused, so a bad file is reported once, not every second.
        var refused: [UInt8]?
    }

    let file: FenceFile
    private let state = Mutex(State())
    private let store: StateStore
    private let logger: Logger
    private let counters: Counters
    private let report: @Sendable (OutboxMessage) -> Void
    private let messages: OutboundMessages
    /// Told of every change of book (old, new), after it is in force.
    private let changed: @Sendable (FenceBook, FenceBook) -> Void

    init(
        file: FenceFile, store: StateStore, logger: Logger, counters: Counters, messages: OutboundMessages,
        report: @escaping @Sendable (OutboxMessage) -> Void,
        changed: @escaping @Sendable (FenceBook, FenceBook) -> Void
    ) {
        self.file = file
        self.store = store
        self.logger = logger
        self.counters = counters
        self.messages = messages
        self.report = report
        self.changed = changed
    }

    /// The fences in force.
    var book: FenceBook { state.withLock { $0.book } }

    /// Loads the file at start, with the fence revisions persisted by earlier runs, so
    /// fences added while the bridge was down are new to every device.
    func load() throws(StartupError) {
        let loaded = file.load()
        for warning in loaded.warnings { logger.warning("\(warning)") }
        guard let book = loaded.book else {
            throw StartupError(["the fence file \(file.path) is not valid:"] + loaded.errors.map { "  \($0)" })
        }
        do {
            let revisions = try store.loadRevisions()
            let revised = book.revised(knownRevisions: revisions.known, currentRevision: revisions.current)
            try store.saveRevisions(of: revised)
            state.withLock {
                $0.book = revised
                $0.contents = loaded.contents
                $0.signature = signature()
            }
        } catch {
            throw StartupError(["cannot use the state directory: \(error)"])
        }
    }

    /// Reloads the file if it changed since it was last looked at (or, with `force`,
    /// whenever its contents differ from the fences in force). Returns whether a new
    /// book is in force.
    @discardableResult
    func reloadIfChanged(force: Bool = false) -> Bool {
        let current = signature()
        let contents: [UInt8]? = state.withLock { state in
            guard force || current != state.signature else { return nil }
            state.signature = current
            return (try? AtomicFile.read(file.path)) ?? nil
        }
        guard let contents else { return false }
        return install(contents, reason: force ? "on request" : "the file changed")
    }

    /// What `change` would make of the fences, without writing: the result (its book
    /// with revisions as installing it would give them) and the file bytes it was made
    /// from, for `apply(_:expecting:)`.
    func preview(_ change: FenceChange) throws(FenceChangeError) -> (applied: FenceChange.Applied, contents: [UInt8]) {
        var (applied, contents) = try file.preview(change)
        applied.book = applied.book.revised(from: book)
        return (applied, contents)
    }

    /// Writes `change` to the file (only if it still holds `expected`, when given) and
    /// puts the result in force.
    func apply(_ change: FenceChange, expecting expected: [UInt8]?) throws(FenceChangeError) -> FenceChange.Applied {
        let (applied, written) = try file.apply(change, expecting: expected)
        install(written, reason: "changed by a command")
        return applied
    }

    /// Validates `contents` and, if they are good and differ from the fences in force,
    /// puts them in force; refuses them with every problem otherwise.
    @discardableResult
    private func install(_ contents: [UInt8], reason: String) -> Bool {
        let result = state.withLock { state -> (old: FenceBook, new: FenceBook)? in
            guard contents != state.contents, contents != state.refused else { return nil }
            let loaded = file.parse(contents)
            guard let parsed = loaded.book else {
                state.refused = contents
                refuse(loaded.errors)
                return nil
            }
            for warning in loaded.warnings { logger.warning("\(warning)") }
            let revised = parsed.revised(from: state.book)
            do {
                try store.saveRevisions(of: revised)
            } catch {
                counters.add("errors.state_write")
                logger.error("could not save the fence revisions: \(error)")
            }
            let old = state.book
            state.book = revised
            state.contents = contents
            state.refused = nil
            state.signature = signature()
            return (old, revised)
        }
        guard let (old, new) = result else { return false }
        counters.add("fence_reloads")
        logger.info("fences reloaded (\(reason)): \(new.fenceCount) fences for \(new.devices.count) devices, revision \(new.revision)")
        changed(old, new)
        return true
    }

    private func refuse(_ problems: [FenceProblem]) {
        counters.add("errors.fence_file")
        logger.error("the fence file \(file.path) is not valid; keeping the fences in force:")
        for problem in problems { logger.error("  \(problem)") }
        report(messages.failure(
            "fence_file",
            "the fence file \(file.path) is not valid; the last good fences stay in force: "
                + problems.map(\.description).joined(separator: "; ")))
    }

    /// The file's size, modification time and inode, or empty when it cannot be read.
    private func signature() -> [Int] {
        var info = stat()
        guard stat(file.path, &info) == 0 else { return [] }
        return [Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec, Int(info.st_ino)]
    }
}
