import Foundation
import GeotifyCore

/// Changing the fence file one `FenceChange` at a time: read and validate the file,
/// apply the change, write the result atomically, all while holding the file's lock, so
/// cooperating writers (the bridge's commands, the command line) take turns and never
/// lose each other's changes. The command line applies to whatever is on disk; an MQTT
/// preview/commit previews first and commits only if what the preview depended on is
/// unchanged: the whole file (`apply(_:expecting:)`) or only the device's own fences
/// (`apply(_:basedOn:)`).
///
/// A missing or unreadable file is refused (`invalid_file`), never replaced by a file
/// holding only the new fence: a fence file deleted or moved while the bridge runs would
/// otherwise lose every other device's fences on the next command. Only the command line
/// creates a missing file, when asked to (`creatingMissingFile`).
extension FenceFile {
    /// What `change` would make of the file as it is now, without writing, and the bytes
    /// it was read from (pass them to `apply(_:expecting:)` to commit exactly this).
    ///
    /// A missing file, or one that does not validate, is refused (`invalid_file`) with
    /// every problem, since rewriting it would lose what its author meant. The warnings
    /// include those of loading the file (a clamped radius elsewhere becomes explicit
    /// when the file is rewritten).
    public func preview(_ change: FenceChange) throws(FenceChangeError) -> (applied: FenceChange.Applied, contents: [UInt8]) {
        let contents = try existingContents()
        return (try applying(change, to: try loaded(contents)), contents)
    }

    /// What `change` would make of the file as it is now, without writing, and its
    /// basis: the device's fences as they are now (pass it to `apply(_:basedOn:)` to
    /// commit this unless those fences changed). Refuses as `preview(_:)` does.
    public func draft(_ change: FenceChange) throws(FenceChangeError) -> (applied: FenceChange.Applied, basis: FenceChangeBasis) {
        let book = try loaded(try existingContents())
        return (try applying(change, to: book), FenceChangeBasis(of: change, in: book.book))
    }

    /// Applies `change` to the file and writes it atomically (pretty-printed, keys
    /// sorted), returning what was applied and the bytes written.
    ///
    /// `expected` nil applies to whatever the file holds now; bytes (from `preview`)
    /// apply only if the file still holds exactly them, else the change is refused as
    /// `stale` and the file left as it is. A missing file is refused (`invalid_file`)
    /// unless `creatingMissingFile`, which makes it with the change alone.
    public func apply(
        _ change: FenceChange, expecting expected: [UInt8]?, creatingMissingFile: Bool = false
    ) throws(FenceChangeError) -> (applied: FenceChange.Applied, written: [UInt8]) {
        try update(change, creatingMissingFile: creatingMissingFile) { (contents, _) throws(FenceChangeError) in
            if let expected, expected != contents {
                throw FenceChangeError(.stale, "the fence file \(path) changed since it was read (edited by someone else); nothing was written, read it again and retry")
            }
        }
    }

    /// Applies `change` to the file as it is now and writes it atomically, provided the
    /// fences the change depends on are still those of `basis` (from `draft`); a change
    /// elsewhere in the file (another device, the groups, the shared fences) does not
    /// matter and is kept. Otherwise refuses as `stale`, writing nothing. A missing file
    /// is refused (`invalid_file`).
    public func apply(
        _ change: FenceChange, basedOn basis: FenceChangeBasis
    ) throws(FenceChangeError) -> (applied: FenceChange.Applied, written: [UInt8]) {
        try update(change, creatingMissingFile: false) { (_, book) throws(FenceChangeError) in
            guard FenceChangeBasis(of: change, in: book) == basis else {
                throw FenceChangeError(.stale, "the fences of device \"\(change.device)\" in \(path) changed since the preview (edited by someone else); nothing was written, preview again")
            }
        }
    }

    /// Applies `change` to a shared set of the file as it is now and writes it
    /// atomically, returning what was applied and the bytes written. A missing file is
    /// refused (`invalid_file`) unless `creatingMissingFile`; in a fence directory only
    /// the shared file is written.
    public func apply(
        _ change: SharedFenceChange, creatingMissingFile: Bool = false
    ) throws(FenceChangeError) -> (applied: FenceChange.Applied, written: [UInt8]) {
        try update(creatingMissingFile: creatingMissingFile, device: nil) { (book, _) throws(FenceChangeError) in
            var applied = try change.apply(to: book.book, limits: limits)
            applied.warnings = book.warnings + applied.warnings
            return applied
        }
    }

    /// Replaces the fences of `devices`, and with `shared` the groups and shared fences,
    /// with those of the book `decide` makes of what reading the fences found (an import
    /// of many fences at once), and writes only their parts: in a fence directory those
    /// devices' files (removing the file of a device the book no longer has) and, with
    /// `shared`, the shared file, leaving every other file as it is; a single file
    /// whole. Returns the bytes written (a directory's snapshot after the write), or
    /// what `decide` refused with, writing nothing.
    ///
    /// The lock is held from the read to the write, as for every other change: a single
    /// file's; an existing fence directory's (`FenceDirectory.withLock`), so no other
    /// writer's change to a device's file or the shared file comes between, and the book
    /// is checked against the files as they are when it is written. A file edited by
    /// hand meanwhile (which takes no lock) is refused as `stale`, fences past
    /// `maximumBytes` as `fenceLimit`, writing nothing.
    ///
    /// `decide` should refuse unless the fences were read (`Reading.contents`): a book
    /// made for a missing or unreadable file is not written (refused as `invalidFile`),
    /// so nobody's fences are replaced by the new ones alone.
    package func replace<Refusal: Error>(
        devices: [String], shared: Bool, with decide: (Reading) throws(Refusal) -> FenceBook
    ) throws(StoreError) -> Result<[UInt8], Refusal> {
        func readAndWrite(holdingDirectoryLock: Bool) throws(StoreError) -> Result<[UInt8], Refusal> {
            let reading = inspect()
            let book: FenceBook
            do { book = try decide(reading) } catch { return .failure(error) }
            guard case .contents(let contents, _) = reading else {
                throw StoreError("write \(path)", "the fences could not be read, so they are not replaced; nothing was written", code: .invalidFile)
            }
            guard layout == .directory else {
                let bytes = FenceFile.contents(of: book)
                try checkSize(of: bytes)
                try writeHoldingLock(bytes, expecting: contents)
                return .success(bytes)
            }
            var changes = FenceFile.deviceFiles(of: devices, in: book)
            if shared {
                changes[FenceDirectory.sharedName] = book.groups.isEmpty && book.shared.isEmpty ? .some(nil) : FenceFile.sharedContents(of: book)
            }
            return .success(holdingDirectoryLock
                ? try directory.writeHoldingLock(changes, expecting: contents)
                : try directory.write(changes, expecting: contents))
        }
        guard layout == .directory else {
            return try AtomicFile.withLock(on: path) { () throws(StoreError) in try readAndWrite(holdingDirectoryLock: false) }
        }
        // Only on a directory that exists: taking the lock makes `devices/`. One that does
        // not is read as missing (or, made meanwhile, written taking the lock for the write).
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return try readAndWrite(holdingDirectoryLock: false)
        }
        return try directory.withLock { () throws(StoreError) in try readAndWrite(holdingDirectoryLock: true) }
    }

    /// Holding the file's lock: reads and validates the file, lets `check` refuse on
    /// what it holds (its bytes and book), applies `change`, writes the result.
    private func update(
        _ change: FenceChange, creatingMissingFile: Bool,
        check: ([UInt8], FenceBook) throws(FenceChangeError) -> Void
    ) throws(FenceChangeError) -> (applied: FenceChange.Applied, written: [UInt8]) {
        try update(creatingMissingFile: creatingMissingFile, device: change.device) { (book, read) throws(FenceChangeError) in
            try check(read, book.book)
            return try applying(change, to: book)
        }
    }

    /// Holding the file's lock: reads and validates the file, lets `change` make the
    /// new book from it (and the bytes read), writes the result: in a fence directory
    /// only `device`'s file, or the shared file when `device` is nil.
    ///
    /// An existing fence directory is read and written holding its own lock too
    /// (`FenceDirectory.withLock`, which the bridge's commands take), so no other
    /// writer changes a device's file or the shared file between the read and the
    /// write: a shared fence is checked against the devices' own fences as they are
    /// when it is written, and a device's fences against the shared file as it is.
    private func update(
        creatingMissingFile: Bool, device: String?,
        _ change: ((book: FenceBook, warnings: [FenceProblem]), [UInt8]) throws(FenceChangeError) -> FenceChange.Applied
    ) throws(FenceChangeError) -> (applied: FenceChange.Applied, written: [UInt8]) {
        let locked = Result { () throws(StoreError) in
            try AtomicFile.withLock(on: path) { () throws(StoreError) -> Result<(applied: FenceChange.Applied, written: [UInt8]), FenceChangeError> in
                // Only on a directory that exists: taking the lock makes `devices/`, and a
                // missing directory is refused (or, when asked, made by the write).
                var isDirectory: ObjCBool = false
                let lockDirectory = layout == .directory && FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
                func readAndWrite() -> Result<(applied: FenceChange.Applied, written: [UInt8]), FenceChangeError> {
                    Result { () throws(FenceChangeError) in
                        let read = try readContents()
                        if read == nil && !creatingMissingFile { throw missing() }
                        let book = try read.map(loaded) ?? (book: FenceBook(), warnings: [])
                        let applied = try change(book, read ?? [])
                        return (applied, try write(applied.book, replacing: read ?? [], device: device, holdingDirectoryLock: lockDirectory))
                    }
                }
                return lockDirectory ? try directory.withLock(readAndWrite) : readAndWrite()
            }
        }
        switch locked {
        case .success(let result): return try result.get()
        case .failure(let error): throw FenceChangeError(.io, error.description)
        }
    }

    /// Writes `book` atomically, over the file's `current` bytes (a fence directory:
    /// only the changed device's file, or with `device` nil the shared file, taking the
    /// directory's lock unless the caller holds it); a failure (a full disk) is refused
    /// as `io`, fences that would take the file (or the directory's files together) past
    /// `maximumBytes` as `fenceLimit`.
    private func write(_ book: FenceBook, replacing current: [UInt8], device: String?, holdingDirectoryLock: Bool) throws(FenceChangeError) -> [UInt8] {
        do {
            if layout == .directory {
                let changes = device.map { FenceFile.deviceFiles(of: [$0], in: book) } ?? [FenceDirectory.sharedName: FenceFile.sharedContents(of: book)]
                return holdingDirectoryLock
                    ? try directory.writeHoldingLock(changes, expecting: current)
                    : try directory.write(changes, expecting: current)
            }
            let bytes = FenceFile.contents(of: book)
            try checkSize(of: bytes)
            try AtomicFile.write(bytes, to: path)
            return bytes
        } catch {
            throw FenceChangeError(error.code ?? .io, error.description)
        }
    }

    /// The file's bytes; a missing or unreadable file is refused.
    private func existingContents() throws(FenceChangeError) -> [UInt8] {
        guard let contents = try readContents() else { throw missing() }
        return contents
    }

    /// The file's bytes, nil when there is no such file; an unreadable one is refused.
    private func readContents() throws(FenceChangeError) -> [UInt8]? {
        do {
            return try read()
        } catch {
            throw FenceChangeError(.invalidFile, "the fence file \(path) cannot be read (\(failure(error))), so it cannot be changed; nothing was written")
        }
    }

    /// The book in `contents` and the warnings of loading it; a file that does not
    /// validate is refused with every problem.
    private func loaded(_ contents: [UInt8]) throws(FenceChangeError) -> (book: FenceBook, warnings: [FenceProblem]) {
        let loaded = parse(contents)
        guard let book = loaded.book else { throw FenceChangeError.invalidFile(path, loaded.errors) }
        return (book, loaded.warnings)
    }

    /// `change` applied to `book`, with the warnings of loading it first (refused as
    /// `FenceChange.apply(to:limits:)` refuses, a shared fence's identifier included).
    private func applying(
        _ change: FenceChange, to book: (book: FenceBook, warnings: [FenceProblem])
    ) throws(FenceChangeError) -> FenceChange.Applied {
        var applied = try change.apply(to: book.book, limits: limits)
        applied.warnings = book.warnings + applied.warnings
        return applied
    }

    private func missing() -> FenceChangeError {
        FenceChangeError(.invalidFile, "the fence file \(path) does not exist (deleted or moved?), so it cannot be changed; nothing was written: put it back")
    }
}
