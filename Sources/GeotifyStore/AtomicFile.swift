import Foundation
import GeotifyCore

/// Whole-file writes that never leave a half-written file: write a temporary file in
/// the same directory, fsync it, rename it over the target, fsync the directory.
/// Readers see either the old contents or the new, even if the process dies or the
/// disk fills in between.
///
/// A path that is a symbolic link is written through: the temporary file goes next to
/// the link's final target and replaces that, so the link stays a link (a fence file
/// kept in a git checkout and linked from /etc stays where its owner put it). A process
/// killed between creating and renaming its temporary file leaves it behind, named
/// `.<name>.tmp-<pid>-<random>`: `removeLeftovers(of:)` clears them.
public enum AtomicFile {
    /// Replaces the file at `path` (or the final target of the link at `path`) with
    /// `bytes`, keeping the old file's permissions.
    public static func write(_ bytes: [UInt8], to path: String) throws(StoreError) {
        let target = try resolve(path)
        let directory = directory(of: target)
        let name = (target as NSString).lastPathComponent
        let temporary = (directory as NSString).appendingPathComponent("\(temporaryPrefix(of: name))\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        var mode: mode_t = 0o644
        var existing = stat()
        if stat(target, &existing) == 0 { mode = existing.st_mode & 0o7777 }

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
        if failure == nil, rename(temporary, target) != 0 { failure = errnoText() }
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

    /// Runs `body` holding an exclusive lock on the directory of `path`'s final target,
    /// so cooperating writers (the bridge, the CLI) take turns in a read-compare-write,
    /// whether they name the file or a link to it.
    public static func withLock<T>(on path: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let directory = directory(of: try resolve(path))
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError("lock \(directory)", errnoText()) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw StoreError("lock \(directory)", errnoText()) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// The contents of the regular file `path`, or nil when there is no such file,
    /// refused when it is larger than `maximumBytes` (`limitName` names the setting in
    /// the message). A file that is not a regular file (a FIFO, a device such as
    /// `/dev/zero`, a directory, or a link to one) is refused without reading, and never
    /// more than `maximumBytes + 1` bytes are read, so a file that grows while it is read
    /// is refused too: reading never blocks, never runs forever, and never holds more
    /// than the limit. There is no read without a limit: every path read may be an
    /// operator's, or someone else's.
    ///
    /// Read straight into the array with `read(2)`, in as many calls as it takes, so a
    /// fence file of many megabytes is copied once, not into a `Data` first.
    ///
    /// The refusals carry `tooLargeCode` (a file past the limit) and `notRegularCode` (a
    /// file of another kind) as their `StoreError.code`, for a caller whose refusals
    /// have codes; a failure to read has none.
    public static func read(
        _ path: String, maximumBytes: Int, limitName: String, tooLargeCode: ErrorCode? = nil, notRegularCode: ErrorCode? = nil
    ) throws(StoreError) -> [UInt8]? {
        try read(path, limit: (max(maximumBytes, 0), limitName), codes: (tooLargeCode, notRegularCode))
    }

    /// The contents of the regular file `path` within `limit` (a kind of file an
    /// operator names: settings, secrets, keys), or nil when there is no such file; as
    /// `read(_:maximumBytes:limitName:)`.
    package static func read(_ path: String, within limit: FileSizeLimit) throws(StoreError) -> [UInt8]? {
        try read(path, maximumBytes: limit.bytes, limitName: limit.name)
    }

    private static func read(
        _ path: String, limit: (bytes: Int, name: String), codes: (tooLarge: ErrorCode?, notRegular: ErrorCode?)
    ) throws(StoreError) -> [UInt8]? {
        // Without waiting: opening a FIFO for reading would block until a writer comes.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw StoreError("read \(path)", errnoText(), file: path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw StoreError("read \(path)", errnoText(), file: path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw StoreError("read \(path)", "not a regular file (\(kind(of: info.st_mode))); only regular files are read", file: path, code: codes.notRegular)
        }
        guard Int(info.st_size) <= limit.bytes else { throw tooLarge(path, "\(info.st_size) bytes", limit, code: codes.tooLarge) }
        let most = limit.bytes + 1
        var bytes: [UInt8] = []
        // One byte more than its size, so the read that finds its end needs no second buffer.
        var room = min(max(Int(info.st_size), 0) + 1, most)
        while true {
            var failure: Int32 = 0
            var ended = false
            let chunk = [UInt8](unsafeUninitializedCapacity: room) { buffer, count in
                count = 0
                while count < buffer.count {
                    let read = Foundation.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
                    if read < 0 && errno == EINTR { continue }
                    if read < 0 { failure = errno }
                    if read <= 0 { ended = true; return }
                    count += read
                }
            }
            if bytes.isEmpty { bytes = chunk } else { bytes += chunk }
            if failure != 0 { throw StoreError("read \(path)", String(cString: strerror(failure)), file: path) }
            if bytes.count > limit.bytes { throw tooLarge(path, "more than \(limit.bytes) bytes", limit, code: codes.tooLarge) }
            if ended { return bytes }
            // The file grew while it was read: read on, up to the limit.
            room = min(1 << 16, most - bytes.count)
        }
    }

    /// The refusal of a file larger than `limit`.
    private static func tooLarge(_ path: String, _ size: String, _ limit: (bytes: Int, name: String), code: ErrorCode?) -> StoreError {
        StoreError("read \(path)", "the file is \(size); at most \(limit.bytes) are accepted (\(limit.name))", file: path, code: code)
    }

    /// What kind of file `mode` is, in words.
    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        default: "of another kind"
        }
    }

    /// Removes the temporary files that writes of `path` left behind when their process
    /// was killed before renaming them, holding the lock so no write in progress loses
    /// its file; returns their paths. Call it at start, before anything writes.
    public static func removeLeftovers(of path: String) throws(StoreError) -> [String] {
        try withLock(on: path) { () throws(StoreError) -> [String] in
            let target = try resolve(path)
            let directory = directory(of: target)
            let prefix = temporaryPrefix(of: (target as NSString).lastPathComponent)
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: directory)
            } catch {
                throw StoreError("list \(directory)", (error as NSError).localizedDescription)
            }
            var removed: [String] = []
            for name in names.sorted() where name.hasPrefix(prefix) {
                let leftover = (directory as NSString).appendingPathComponent(name)
                guard unlink(leftover) == 0 else { throw StoreError("remove \(leftover)", errnoText()) }
                removed.append(leftover)
            }
            return removed
        }
    }

    /// The file `path` names in the end: the path itself, or the final target of the
    /// symbolic links it goes through (which need not exist). Refuses a loop of links.
    public static func resolve(_ path: String) throws(StoreError) -> String {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length >= 0 else { throw StoreError("follow the link \(current)", errnoText()) }
            let target = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : (directory(of: current) as NSString).appendingPathComponent(target)
        }
        throw StoreError("follow the link \(path)", "too many levels of symbolic links")
    }

    /// The directory `path` is in ("." for a bare name).
    private static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    /// How the temporary files of writes to the file `name` begin.
    private static func temporaryPrefix(of name: String) -> String { ".\(name).tmp-" }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
