import Foundation

/// How far the outbox has been handed to the broker, kept in a small file of its own
/// next to the state database (`outbox.handed`): the highest outbox row id handed to the
/// MQTT client, and the highest row id up to which every message was acknowledged.
///
/// It is written before each hand-over (one `pwrite` of 24 bytes: the two marks and a
/// check word; no SQLite transaction), so after a crash no message handed over is published again. It lives
/// outside the database on purpose: if the database's write-ahead log is lost, the
/// database falls back to an older state whose outbox still holds messages sent long
/// ago; this file still says they were sent, so they are not sent again.
public final class OutboxWatermark: Sendable {
    /// The two marks.
    public struct Marks: Sendable, Equatable {
        /// Every outbox row up to this id was handed to the MQTT client.
        public var handed: Int64
        /// Every outbox row up to this id was acknowledged by the broker (or was QoS 0).
        public var acknowledged: Int64

        public init(handed: Int64, acknowledged: Int64) {
            self.handed = handed
            self.acknowledged = acknowledged
        }
    }

    /// The file.
    public let path: String
    private let descriptor: Int32
    private let synchronous: Bool

    /// Opens (creating) the file at `path`; `synchronous` makes each write reach the disk
    /// (`fdatasync`) before it returns, for the `full` durability.
    public init(path: String, synchronous: Bool) throws(StoreError) {
        self.path = path
        self.synchronous = synchronous
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StoreError("open \(path)", String(cString: strerror(errno))) }
    }

    deinit {
        close(descriptor)
    }

    /// What the file holds, as the state store finds it on opening.
    package enum Contents: Sendable, Equatable {
        /// Nothing (0 bytes): the file is new, so nothing was handed over yet.
        case empty
        /// A whole mark, its check word right.
        case marks(Marks)
        /// Anything else (a torn or garbled write, a file cut short or changed by hand),
        /// described: how far the outbox was handed over cannot be told.
        case damaged(String)
    }

    /// The marks in the file; zeros when it is new, empty or damaged. The state store
    /// looks at the file when it opens (`contents()`) and writes a damaged one over, so
    /// while it is open a damaged file is only one changed behind its back.
    public func read() -> Marks {
        if case .marks(let marks) = contents() { return marks }
        return Marks(handed: 0, acknowledged: 0)
    }

    /// What the file holds: nothing, a mark, or damage (recognised by the size, which
    /// is 24 bytes, and the check word).
    package func contents() -> Contents {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .damaged("it cannot be examined: \(String(cString: strerror(errno)))") }
        guard info.st_size != 0 else { return .empty }
        guard info.st_size == 24 else { return .damaged("\(info.st_size) bytes; a mark is 24") }
        var words: [Int64] = [0, 0, 0]
        let count = words.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 24, 0) }
        guard count == 24 else {
            return .damaged(count < 0 ? "it cannot be read: \(String(cString: strerror(errno)))" : "\(count) of its 24 bytes could be read")
        }
        guard words[2] == Self.check(words[0], words[1]) else { return .damaged("its check word does not match its marks (a torn or garbled write)") }
        return .marks(Marks(handed: words[0], acknowledged: words[1]))
    }

    /// Writes `marks`; throws when the write fails (a full disk), so the caller can hold
    /// back the hand-over it was about to make.
    public func write(_ marks: Marks) throws(StoreError) {
        let words: [Int64] = [marks.handed, marks.acknowledged, Self.check(marks.handed, marks.acknowledged)]
        let count = words.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, 24, 0) }
        guard count == 24 else {
            throw StoreError("write \(path)", count < 0 ? String(cString: strerror(errno)) : "short write")
        }
        if synchronous, fdatasync(descriptor) != 0 {
            throw StoreError("sync \(path)", String(cString: strerror(errno)))
        }
    }

    /// Writes `marks` over a damaged file, cutting it to a mark's 24 bytes first.
    package func repair(_ marks: Marks) throws(StoreError) {
        guard ftruncate(descriptor, 24) == 0 else { throw StoreError("truncate \(path)", String(cString: strerror(errno))) }
        try write(marks)
    }

    private static func check(_ handed: Int64, _ acknowledged: Int64) -> Int64 {
        (handed &* 0x5851_F42D_4C95_7F2D) ^ (acknowledged &+ 0x1405_7B7E_F767_814F) ^ 0x6765_6F74_6966_79
    }
}
