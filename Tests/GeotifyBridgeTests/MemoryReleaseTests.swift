import Foundation
import GeotifyTestSupport
import Testing

@testable import GeotifyBridge

/// Which mappings `MemoryRelease.dropStartupPages` lets go of, and that doing so in a
/// running process gives their pages back and loses nothing.
@Suite struct MemoryReleaseTests {
    static let smaps = """
        55d0a1000000-55d0a1400000 r--p 00000000 fe:00 5728900                    /usr/local/bin/geotify
        Size:               4096 kB
        Rss:                1456 kB
        Private_Dirty:      1456 kB
        Anonymous:             0 kB
        VmFlags: rd mr mw me sd
        55d0a1400000-55d0a2400000 r-xp 003e6000 fe:00 5728900                    /usr/local/bin/geotify
        Rss:               10300 kB
        Anonymous:             0 kB
        55d0a2400000-55d0a2500000 r--p 013f4000 fe:00 5728900                    /usr/local/bin/geotify
        Rss:                 608 kB
        Anonymous:           608 kB
        55d0a2500000-55d0a2800000 rw-p 0148b000 fe:00 5728900                    /usr/local/bin/geotify
        Rss:                2020 kB
        Anonymous:           344 kB
        7fc7cfc44000-7fc7cfd9a000 r-xp 00026000 fe:00 333151                     /usr/lib/x86_64-linux-gnu/libc.so.6
        Rss:                1008 kB
        Anonymous:             0 kB
        7fc7cfe00000-7fc7cfe10000 r--s 00000000 fe:00 42                         /run/state/geotify.db-shm
        Rss:                  64 kB
        Anonymous:             0 kB
        7fc7cfe10000-7fc7cfe20000 r-xp 00000000 fe:00 333152                     /usr/lib/unused.so
        Rss:                   0 kB
        Anonymous:             0 kB
        7fc7cfe20000-7fc7cfe30000 r--p 00000000 fe:00 333153                     /usr/lib/cut.so
        Rss:                  16 kB
        7fc7cfe30000-7fc7cfe40000 rw-p 00000000 00:00 0                          [heap]
        Rss:                  64 kB
        Anonymous:            64 kB
        7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0                          [vdso]
        Rss:                   8 kB
        Anonymous:             0 kB
        """

    @Test func onlyReadOnlyPrivateFileMappingsWithNoPageOfTheirOwnAreLetGo() {
        #expect(FileMapping.clean(in: Self.smaps) == [
            FileMapping(start: 0x55d0_a100_0000, end: 0x55d0_a140_0000, resident: 1_456 * 1_024),
            FileMapping(start: 0x55d0_a140_0000, end: 0x55d0_a240_0000, resident: 10_300 * 1_024),
            FileMapping(start: 0x7fc7_cfc4_4000, end: 0x7fc7_cfd9_a000, resident: 1_008 * 1_024),
        ], "not the relocated constants, writable data, a shared mapping, one with nothing resident, one described in part, the heap or the vDSO")
        #expect(FileMapping.clean(in: "").isEmpty)
        #expect(FileMapping.clean(in: "zz-yy r-xp 0 fe:00 1 /x\nRss: 4 kB\nAnonymous: 0 kB").isEmpty, "a range that is not hexadecimal")
    }

    /// In this process: the pages go, and the code they held runs on (this test goes on
    /// running after the drop, reading its status through that code).
    @Test func droppingTheStartupPagesGivesThemBackAndLosesNothing() throws {
        func residentFileKilobytes() -> Int? {
            let status = MemoryRelease.kernelFile("/proc/self/status") ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("RssFile:") }
            return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
        }
        let before = try #require(residentFileKilobytes())
        let dropped = MemoryRelease.dropStartupPages()
        let after = try #require(residentFileKilobytes())
        #expect(dropped > 1_000_000, "this test binary's code was resident")
        #expect(after < before, "RssFile \(before) kB before, \(after) kB after")
    }

    /// A mapping that ends the text is let go of like the others: the last mapping in
    /// smaps is as eligible as any (here the libc code of the fixture, moved to the end).
    @Test func theLastMappingOfTheTextCounts() {
        let smaps = """
            7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0                          [vdso]
            Rss:                   8 kB
            Anonymous:             0 kB
            7fc7cfc44000-7fc7cfd9a000 r-xp 00026000 fe:00 333151                     /usr/lib/x86_64-linux-gnu/libc.so.6
            Rss:                1008 kB
            Anonymous:             0 kB
            """
        #expect(FileMapping.clean(in: smaps) == [FileMapping(start: 0x7fc7_cfc4_4000, end: 0x7fc7_cfd9_a000, resident: 1_008 * 1_024)])
    }

    /// A line that starts like a mapping but whose range cannot be read ends the mapping
    /// before it: the lines under it describe the unreadable one, not the one before, so
    /// the one before is not taken a second time with their resident bytes.
    @Test func theLinesUnderAnUnreadableRangeBelongToNoMapping() {
        let smaps = """
            7fc7cfc44000-7fc7cfd9a000 r-xp 00026000 fe:00 333151                     /usr/lib/x86_64-linux-gnu/libc.so.6
            Rss:                1008 kB
            Anonymous:             0 kB
            zz-yy r-xp 00000000 fe:00 1                                              /usr/lib/broken.so
            Rss:                   4 kB
            Anonymous:             0 kB
            """
        #expect(FileMapping.clean(in: smaps) == [FileMapping(start: 0x7fc7_cfc4_4000, end: 0x7fc7_cfd9_a000, resident: 1_008 * 1_024)])
    }

    /// A writable private mapping of a file is kept even when none of its pages has been
    /// written yet (no anonymous page): the bridge may write it at any time, and only
    /// read-only mappings are promised to map again as they were.
    @Test func aWritableMappingIsKeptEvenWithNoPageOfItsOwn() {
        let smaps = """
            55d0a2500000-55d0a2800000 rw-p 0148b000 fe:00 5728900                    /usr/local/bin/geotify
            Rss:                2020 kB
            Anonymous:             0 kB
            """
        #expect(FileMapping.clean(in: smaps).isEmpty)
    }

    /// What `dropStartupPages` returns is the resident bytes it let go of, not the size of
    /// the mappings: a file mapped here, of 16 pages with 2 of them touched, described as
    /// smaps would describe it, counts its 2 resident pages.
    @Test func theBytesDroppedAreTheResidentOnes() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let directory = try makeTemporaryDirectory("memory-release")
        let path = directory.appendingPathComponent("constants").path
        try Data(repeating: 0x47, count: 16 * page).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let mapped = try #require(mmap(nil, 16 * page, PROT_READ, MAP_PRIVATE, descriptor, 0))
        try #require(mapped != MAP_FAILED)
        defer { munmap(mapped, 16 * page) }
        #expect(mapped.load(as: UInt8.self) == 0x47)
        let start = Int(bitPattern: mapped)
        let smaps = """
            \(String(start, radix: 16))-\(String(start + 16 * page, radix: 16)) r--p 00000000 fe:00 4242 \(path)
            Rss:                   \(2 * page / 1_024) kB
            Anonymous:             0 kB
            """
        #expect(MemoryRelease.dropStartupPages(smaps: smaps) == 2 * page)
        #expect(mapped.load(as: UInt8.self) == 0x47, "the page maps again from the file")
    }

    /// A file the kernel makes as it is read, or any other, is read to its end, past the
    /// 64 kB a single read takes.
    @Test func aFileIsReadToItsEnd() throws {
        let directory = try makeTemporaryDirectory("memory-release")
        let path = directory.appendingPathComponent("smaps").path
        let text = String(repeating: "7fc7cfc44000-7fc7cfd9a000 r-xp 00026000 fe:00 333151 /usr/lib/libc.so.6\n", count: 3_000)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(MemoryRelease.kernelFile(path) == text)
    }
}
