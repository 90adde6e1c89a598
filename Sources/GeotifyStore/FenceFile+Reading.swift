/// Reading the fence file to watch it: the bytes with their fingerprint, or that the
/// file is gone or cannot be read, so a running bridge reports a deleted, moved or
/// unreadable file at once (and refuses commands that write, which `FenceFile.apply`
/// does by itself) instead of noticing only when the next command writes.
extension FenceFile {
    /// What reading the file found.
    public enum Reading: Sendable, Equatable {
        /// The file's bytes and their fingerprint.
        case contents([UInt8], FenceFileFingerprint)
        /// There is no file at the path (or the link there points nowhere).
        case missing
        /// The file is there but cannot be read; the reason, naming the file of a fence
        /// directory that failed.
        case unreadable(String)
    }

    /// Reads the file (through a symbolic link, like every read and write of it), or a
    /// fence directory's snapshot.
    public func inspect() -> Reading {
        do {
            guard let contents = try read() else { return .missing }
            return .contents(contents, FenceFileFingerprint(of: contents))
        } catch {
            return .unreadable(failure(error))
        }
    }

    /// Why reading failed, naming the file that failed when it is not `path` itself (a
    /// file of a fence directory, the final target of a link).
    func failure(_ error: StoreError) -> String {
        guard let file = error.file, file != path else { return error.reason }
        return "\(file): \(error.reason)"
    }

    /// The refusal of a change whose fences could not be read (`error` says why):
    /// `invalid_file`, as a missing or invalid fence file is refused, since nothing can
    /// be written safely over what was not read; `io` is for a write that fails.
    package func unreadable(_ error: StoreError) -> StoreError {
        StoreError(
            "change \(path)", "the fence file cannot be read (\(failure(error))), so it cannot be changed; nothing was written",
            file: error.file, code: .invalidFile)
    }
}
