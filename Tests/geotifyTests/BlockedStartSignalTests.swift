import Foundation
import Testing
import GeotifyTestSupport

/// `geotify run` stopped by a signal while its start is blocked. A suite of its own, and
/// `.longWaiting`: the process takes its grace of 5 s of real time before it exits, and
/// in the serialized command-line suite this test started late and ended the whole run
/// alone (its last 5 s of 46 on 6 Dec 2026).
@Suite("A signal while the start is blocked", .waiting)
struct BlockedStartSignalTests {
    /// A SIGTERM while the start was blocked (here waiting for the lock on the fence
    /// file's directory, which the start takes to remove the temporary files of
    /// interrupted writes, held by a process that does not let go) logged "received
    /// SIGTERM, stopping" and the process stayed until SIGKILL: the stop waited for the
    /// start. It now exits without a graceful stop when the start has not ended
    /// `startGrace` (5 s) later, and at once on a second SIGTERM or SIGINT.
    @Test(.longWaiting) func aSignalWhileTheStartIsBlockedEndsTheProcess() throws {
        let directory = try makeTemporaryDirectory("blocked-start")
        defer { try? FileManager.default.removeItem(at: directory) }
        let locked = directory.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
        try CommandLineTests.fences.write(to: locked.appendingPathComponent("fences.json"), atomically: true, encoding: .utf8)
        let lock = open(locked.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(lock >= 0)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX) == 0)
        let inode = try FileLockWaiters.inode(of: locked.path)
        let settings = directory.appendingPathComponent("blocked.json")
        try #"{"fences": "locked/fences.json", "stateDir": "state-blocked", "broker": "mqtt://127.0.0.1:1"}"#
            .write(to: settings, atomically: true, encoding: .utf8)
        for again in [true, false] {
            let log = directory.appendingPathComponent("blocked-\(again).log")
            let child = try ChildProcess(executable: geotifyExecutable.path, arguments: ["run", "--config", settings.path], outputFile: log)
            let text = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
            try #require(waitUntil(timeout: 30) { FileLockWaiters.contains(pid: child.pid, inode: inode) }, "the start waits for the lock: \(text())")
            child.terminate(signal: SIGTERM)
            #expect(waitUntil { text().contains("received SIGTERM while starting") }, "\(text())")
            if again { child.terminate(signal: SIGINT) }
            #expect(child.waitForExit(timeout: 30), "the process ends: \(text())")
            #expect(child.exitCode == 1)
            #expect(text().contains(again
                ? "received SIGINT again, exiting without stopping gracefully"
                : "the start did not end within 5 s of SIGTERM; exiting without stopping gracefully"), "\(text())")
        }
    }
}
