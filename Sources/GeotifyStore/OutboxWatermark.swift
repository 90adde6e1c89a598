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

    /// The marks in the file; zeros when it is new, empty or unreadable (a torn or
    /// garbled write is recognised by its check word).
    public func read() -> Marks {
        var words: [Int64] = [0, 0, 0]
        let count = words.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 24, 0) }
        guard count == 24, words[2] == Self.check(words[0], words[1]) else { return Marks(handed: 0, acknowledged: 0) }
        return Marks(handed: words[0], acknowledged: words[1])
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

    private static func check(_ handed: Int64, _ acknowledged: Int64) -> Int64 {
        (handed &* 0x5851_F42D_4C95_7F2D) ^ (acknowledged &+ 0x1405_7B7E_F767_814F) ^ 0x6765_6F74_6966_79
    }
}
