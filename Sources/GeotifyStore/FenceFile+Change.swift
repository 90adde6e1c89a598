import GeotifyCore

/// Changing the fence file one `FenceChange` at a time: read and validate the file,
/// apply the change, write the result atomically, refusing when the file changed in
/// between. The command line applies to whatever is on disk; an MQTT preview/commit
/// previews first and commits only if the file still holds what was previewed.
extension FenceFile {
    /// What `change` would make of the file as it is now, without writing, and the bytes
    /// it was read from (pass them to `apply(_:expecting:)` to commit exactly this).
    ///
    /// A missing file counts as one without devices, so a first `add` creates it; a file
    /// that does not validate is refused with every problem, since rewriting it would
    /// lose what its author meant. The warnings include those of loading the file (a
    /// clamped radius elsewhere becomes explicit when the file is rewritten).
    public func preview(_ change: FenceChange) throws(FenceChangeError) -> (applied: FenceChange.Applied, contents: [UInt8]) {
        let contents = try currentContents()
        return (try applying(change, to: contents), contents ?? [])
    }

    /// Applies `change` to the file and writes it atomically (pretty-printed, keys
    /// sorted), returning what was applied and the bytes written.
    ///
    /// `expected` nil applies to whatever the file holds now; bytes (from `preview`)
    /// apply only if the file still holds exactly them. Either way a file changed by
    /// someone else between reading and writing is refused as `stale`, and left as it is.
    public func apply(
        _ change: FenceChange, expecting expected: [UInt8]?
    ) throws(FenceChangeError) -> (applied: FenceChange.Applied, written: [UInt8]) {
        let current = try currentContents()
        let contents = current ?? []
        if let expected, expected != contents { throw stale() }
        let applied = try applying(change, to: current)
        do {
            return (applied, try write(applied.book, expecting: contents, devices: [change.device]))
        } catch {
            // `write` refuses a file that no longer holds `contents`; one that still holds
            // them was not written for another reason: an I/O failure.
            if let now = try? read() ?? [], now != contents { throw stale() }
            throw FenceChangeError(.io, error.description)
        }
    }

    /// The file's bytes (a directory's snapshot), nil when there is no such file.
    private func currentContents() throws(FenceChangeError) -> [UInt8]? {
        do {
            return try read()
        } catch {
            throw FenceChangeError(.io, error.description)
        }
    }

    /// `change` applied to the book in `contents` (none: no devices), with the warnings
    /// of loading it first.
    private func applying(_ change: FenceChange, to contents: [UInt8]?) throws(FenceChangeError) -> FenceChange.Applied {
        guard let contents else { return try change.apply(to: FenceBook(), limits: limits) }
        let loaded = parse(contents)
        guard let book = loaded.book else { throw FenceChangeError.invalidFile(path, loaded.errors) }
        var applied = try change.apply(to: book, limits: limits)
        applied.warnings = loaded.warnings + applied.warnings
        return applied
    }

    private func stale() -> FenceChangeError {
        FenceChangeError(.stale, "the fence file \(path) changed since it was read (edited by someone else); nothing was written, read it again and retry")
    }
}
