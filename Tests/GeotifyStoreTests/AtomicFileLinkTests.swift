import Foundation
import GeotifyStore
import Testing

/// Writing through a symbolic link (`AtomicFile.write`): the link stays a link and its
/// final target gets the new contents, however long the link's target is.
@Suite("Writing through a link")
struct AtomicFileLinkTests {
    let directory = TemporaryDirectory()

    /// A link may hold a target of up to `PATH_MAX - 1` bytes (4 095): one that long,
    /// an absolute path padded with slashes, is read whole, so the write replaces the
    /// file it names and not one named by its first 4 094 bytes.
    @Test func aLinkWhoseTargetIsAsLongAsAPathMayBeIsFollowedInFull() throws {
        let file = directory.write("old", to: "fences.json")
        let padding = Int(PATH_MAX) - 1 - directory.path.utf8.count - "/fences.json".utf8.count
        try #require(padding > 0)
        let target = directory.path + String(repeating: "/", count: padding + 1) + "fences.json"
        #expect(target.utf8.count == Int(PATH_MAX) - 1)
        let link = directory.file("link.json")
        try #require(symlink(target, link) == 0)

        try AtomicFile.write(Array("new".utf8), to: link)

        #expect(try String(contentsOfFile: file, encoding: .utf8) == "new")
        var info = stat()
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK && info.st_size == target.utf8.count, "the link stays a link")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["fences.json", "link.json"])
    }
}
