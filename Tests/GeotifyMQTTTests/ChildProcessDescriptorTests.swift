import Foundation
import GeotifyTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A child a test spawns (`ChildProcess`: brokers, the geotify binary, a shell) keeps
/// none of the test process's descriptors but its standard ones. Tests run in parallel in
/// one process: a socket or pipe end one test holds, inherited by another test's child,
/// stays open as long as that child lives, so a reader never sees its end of stream (the
/// buffered-socket test saw `EAGAIN` instead of 0 in one CI run) and a connection a test
/// closes is not closed. Tests start programs only this way (`CompletedProcess` and
/// `runCommand` run a `ChildProcess` to its end). What no spawn can avoid: from its fork
/// to its exec a child holds a copy of every descriptor, so a test that closes one end
/// waits for the other end to see it (`BufferedSocketTests`).
@Suite("Children spawned by tests")
struct ChildProcessDescriptorTests {
    @Test("a child keeps no descriptor of the test process but 0, 1 and 2")
    func childKeepsOnlyStandardDescriptors() throws {
        var ends: [Int32] = [-1, -1]
        // Without close-on-exec, as a test's socket pair or pipe may be.
        #expect(pipe(&ends) == 0)
        defer { for end in ends { _ = close(end) } }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("child-fds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let listing = scratch.appendingPathComponent("fds")
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "ls /proc/$$/fd"], outputFile: listing)
        #expect(child.waitForExit())
        let open = try String(contentsOf: listing, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        #expect(!open.contains(ends[0]) && !open.contains(ends[1]), "the child holds \(open), the pipe is \(ends)")
        #expect(open.contains(0) && open.contains(1) && open.contains(2))
    }

    @Test("a child of runCommand keeps no descriptor of the test process but 0, 1 and 2")
    func runCommandChildKeepsNoneOfOurs() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for end in ends { _ = close(end) } }
        let listing = try runCommand("sh", ["-c", "ls /proc/$$/fd"])
        let open = listing.split(separator: "\n").compactMap { Int32($0) }
        #expect(!open.contains(ends[0]) && !open.contains(ends[1]), "the child holds \(open), the pipe is \(ends)")
        #expect(open.contains(0) && open.contains(1) && open.contains(2))
    }
}
