import Foundation
import GeotifyStore
import GeotifyTestSupport
import Testing

/// The fence file's fingerprint and how the file is read: every byte counts, whichever
/// of the hash's lanes or its tail it falls in, and a read returns all of a file
/// whatever its size said.
@Suite("Fence file fingerprint")
struct FenceFileFingerprintTests {
    /// Each byte of contents of every length up to a few blocks of 32, changed alone,
    /// changes the fingerprint; so does swapping two words of one block (lanes differ).
    @Test func everyByteCounts() {
        for length in 0..<100 {
            let contents = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let original = FenceFileFingerprint(of: contents)
            for position in 0..<length {
                var changed = contents
                changed[position] ^= 0x01
                #expect(FenceFileFingerprint(of: changed) != original, "length \(length), byte \(position)")
            }
            if length >= 32 {
                var swapped = contents
                swapped[0..<8] = contents[8..<16]
                swapped[8..<16] = contents[0..<8]
                #expect(FenceFileFingerprint(of: swapped) != original, "length \(length): two words swapped")
            }
        }
    }

    /// A part of a snapshot has the fingerprint of the same bytes on their own.
    @Test func aSliceHasTheFingerprintOfItsBytes() {
        let bytes = Array("0123456789abcdefghijklmnopqrstuvwxyz{\"devices\": {}}".utf8)
        #expect(FenceFileFingerprint(of: bytes[5..<47]) == FenceFileFingerprint(of: Array(bytes[5..<47])))
        #expect(FenceFileFingerprint(of: bytes[5..<47]) != FenceFileFingerprint(of: bytes[6..<48]))
    }

    /// A file read whole, an empty file as no bytes, a missing one as nil, and a file
    /// whose size says nothing of its contents (a /proc file says 0) read to its end, as
    /// Foundation reads it.
    @Test func aReadReturnsTheWholeFile() throws {
        let directory = TemporaryDirectory()
        let text = String(repeating: "fence ", count: 50_000)
        let path = directory.write(text, to: "big.json")
        func read(_ path: String) throws(StoreError) -> [UInt8]? {
            try AtomicFile.read(path, maximumBytes: 1 << 20, limitName: "the test's limit")
        }
        #expect(try read(path) == Array(text.utf8))
        #expect(try read(directory.write("", to: "empty.json")) == [])
        #expect(try read(directory.file("missing.json")) == nil)
        #expect(try read(directory.file("missing/below.json")) == nil)
        #expect(throws: StoreError.self) { try read(directory.path) }

        var info = stat()
        #expect(stat("/proc/cpuinfo", &info) == 0 && info.st_size == 0)
        let cpus = try #require(try read("/proc/cpuinfo"))
        #expect(cpus.count > 1, "read on past the size the file gave")
        #expect(cpus == Array(try #require(kernelFileText("/proc/cpuinfo")).utf8))
    }
}
