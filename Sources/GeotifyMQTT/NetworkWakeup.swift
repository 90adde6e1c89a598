#if canImport(Glibc)
import Glibc
#endif

/// A pipe the network loop polls beside its socket, so another thread can wake it when
/// it has queued something for it to write (a publish, a disconnect): the loop runs
/// libmosquitto's read, write and housekeeping steps itself and never reads the socket
/// pair libmosquitto keeps for `mosquitto_loop`.
final class NetworkWakeup: Sendable {
    /// The end to poll for reading; -1 when the system gave no pipe (the loop then
    /// notices queued work at its next timeout).
    let descriptor: Int32
    private let writer: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) != 0 { ends = [-1, -1] }
        for end in ends where end >= 0 {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        descriptor = ends[0]
        writer = ends[1]
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if writer >= 0 { close(writer) }
    }

    /// Wakes the loop (a full pipe already will).
    func signal() {
        guard writer >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(writer, &byte, 1)
    }

    /// Clears the wake-ups, once the loop has woken.
    func drain() {
        guard descriptor >= 0 else { return }
        var bytes = [UInt8](repeating: 0, count: 256)
        while read(descriptor, &bytes, bytes.count) == bytes.count {}
    }
}
