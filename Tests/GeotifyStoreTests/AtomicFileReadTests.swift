import Foundation
import GeotifyStore
import GeotifyTestSupport
import Testing

/// Reading a file an operator names (`AtomicFile.read`): a file that is not there reads as
/// nil, for the caller to say so in its own words; one that is there and cannot be
/// opened is an error that says why.
@Suite("Reading a named file")
struct AtomicFileReadTests {
    let directory = TemporaryDirectory()

    /// No such file, nothing at the path or a path through a regular file, is nil; a
    /// path that cannot be opened for another reason (a name too long, a loop of links)
    /// is an error naming the reason, not taken for a missing file.
    @Test func aMissingFileIsNilAndOneThatCannotBeOpenedIsAnError() throws {
        #expect(try AtomicFile.read(directory.file("gone"), within: .settings) == nil)
        _ = directory.write("x", to: "file")
        #expect(try AtomicFile.read(directory.file("file") + "/below", within: .settings) == nil, "a path through a file")

        let long = directory.file(String(repeating: "a", count: 300))
        let tooLong = #expect(throws: StoreError.self) { try AtomicFile.read(long, within: .settings) }
        #expect(tooLong?.reason == String(cString: strerror(ENAMETOOLONG)))
        #expect(symlink(directory.file("loop"), directory.file("loop")) == 0)
        let loop = #expect(throws: StoreError.self) { try AtomicFile.read(directory.file("loop"), within: .settings) }
        #expect(loop?.reason == String(cString: strerror(ELOOP)))
    }

    /// A read that fails is an error naming the reason, not tried again: `/proc/self/mem`
    /// is a regular file whose first bytes (the unmapped page at address 0) cannot be
    /// read.
    @Test func aReadThatFailsIsAnErrorThatSaysWhy() throws {
        let failed = #expect(throws: StoreError.self) { try AtomicFile.read("/proc/self/mem", within: .settings) }
        #expect(failed?.reason == String(cString: strerror(EIO)))
    }

    /// A file is held in about its own size, not in a buffer as large as the limit it
    /// was read within: a fence file of a few bytes read within a limit of 16 MiB keeps
    /// no 16 MiB for as long as its bytes are kept.
    @Test func aSmallFileIsHeldInAboutItsOwnSize() throws {
        let path = directory.write("{}\n", to: "small.json")
        let bytes = try #require(try AtomicFile.read(path, maximumBytes: 16 << 20, limitName: "the test's limit"))
        #expect(bytes == Array("{}\n".utf8))
        #expect(bytes.capacity < 4_096, "\(bytes.capacity) bytes held")
    }

    /// A file is read in one call for its size and one that finds its end, not a byte
    /// at a time nor in a chunk too small for it.
    @Test func aFileIsReadInOneCallAndOneThatFindsItsEnd() throws {
        let text = String(repeating: "x", count: 100_000)
        let path = directory.write(text, to: "large.json")
        let before = try ThreadReads.now()
        let bytes = try AtomicFile.read(path, maximumBytes: 16 << 20, limitName: "the test's limit")
        let after = try ThreadReads.now()
        #expect(bytes?.count == 100_000)
        #expect(after.readCalls(since: before) == 2)
    }
}
