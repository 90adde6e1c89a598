import Foundation

/// Whole-file writes that never leave a half-written file: write a temporary file in
/// the same directory, fsync it, rename it over the target, fsync the directory.
/// Readers see either the old contents or the new, even if the process dies or the
/// disk fills in between.
public enum AtomicFile {
    /// Replaces the file at `path` with `bytes`, keeping the old file's permissions.
    public static func write(_ bytes: [UInt8], to path: String) throws(StoreError) {
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = (directory as NSString).appendingPathComponent(".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        var mode: mode_t = 0o644
        var existing = stat()
        if stat(path, &existing) == 0 { mode = existing.st_mode & 0o7777 }

        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw StoreError("write \(path)", "cannot create a temporary file: \(errnoText())") }
        var failure: String?
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errnoText()
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = errnoText() }
        if close(descriptor) != 0, failure == nil { failure = errnoText() }
        if failure == nil, rename(temporary, path) != 0 { failure = errnoText() }
        if let failure {
            unlink(temporary)
            throw StoreError("write \(path)", failure)
        }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// Runs `body` holding an exclusive lock on the directory of `path`, so cooperating
    /// writers (the bridge, the CLI) take turns in a read-compare-write.
    public static func withLock<T>(on path: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError("lock \(directory)", errnoText()) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw StoreError("lock \(directory)", errnoText()) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// The contents of `path`, or nil when there is no such file.
    public static func read(_ path: String) throws(StoreError) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            if errno == ENOENT || !FileManager.default.fileExists(atPath: path) { return nil }
            throw StoreError("read \(path)", errnoText())
        }
        defer { try? handle.close() }
        do {
            return [UInt8](try handle.readToEnd() ?? Data())
        } catch {
            throw StoreError("read \(path)", (error as NSError).localizedDescription)
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
