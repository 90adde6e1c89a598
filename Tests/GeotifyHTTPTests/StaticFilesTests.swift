import Foundation
import GeotifyHTTP
import GeotifyTestSupport
import Testing

@Suite struct StaticFilesTests {
    @Test func traversalAndHiddenNamesAreRefusedBeforeTheFileSystem() {
        for path in ["../etc/passwd", "a/../../b", "./leaflet.js", ".hidden", "a//b", "", "a\\..\\b", "images/..", "x\0y"] {
            #expect(StaticFiles.check(path)?.status == 404, "\(path)")
        }
        #expect(StaticFiles.check("images/marker-icon.png") == nil)
    }

    @Test func filesAreServedWithTheirTypeAndDirectoriesAreNotListed() throws {
        let root = try makeTemporaryDirectory("static").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/images", withIntermediateDirectories: true)
        try Data("L={}".utf8).write(to: URL(fileURLWithPath: root + "/leaflet.js"))
        try Data([0x89, 0x50]).write(to: URL(fileURLWithPath: root + "/images/a.png"))
        let files = StaticFiles(directory: root)
        let script = files.response(for: "leaflet.js")
        #expect(script.status == 200)
        #expect(script.bytes == Array("L={}".utf8))
        #expect(script.headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(files.response(for: "images/a.png").headers["Content-Type"] == "image/png")
        #expect(files.response(for: "images").status == 404)
        #expect(files.response(for: "missing.js").status == 404)
    }

    /// A link out of the served directory is refused, also into a sibling directory whose
    /// name begins like the served one's (`served-private` beside `served`).
    @Test(arguments: ["secret.txt", "served-private/secret.txt"])
    func aSymbolicLinkOutOfTheDirectoryIsRefused(target: String) throws {
        let directory = try makeTemporaryDirectory("static").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = directory + "/served"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/served-private", withIntermediateDirectories: true)
        try Data("secret".utf8).write(to: URL(fileURLWithPath: directory + "/" + target))
        try FileManager.default.createSymbolicLink(atPath: root + "/link.txt", withDestinationPath: directory + "/" + target)
        #expect(StaticFiles(directory: root).response(for: "link.txt").status == 404)
    }

    @Test func aFileLargerThanTheLimitIsNotServed() throws {
        let root = try makeTemporaryDirectory("static").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Data("1234".utf8).write(to: URL(fileURLWithPath: root + "/four.js"))
        try Data("12345".utf8).write(to: URL(fileURLWithPath: root + "/five.js"))
        let files = StaticFiles(directory: root, maximumBytes: 4)
        #expect(files.response(for: "four.js").status == 200)
        #expect(files.response(for: "five.js").status == 404)
    }
}
