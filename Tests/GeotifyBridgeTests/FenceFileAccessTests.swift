import Foundation
@testable import GeotifyBridge
import GeotifyStore
import GeotifyTestSupport
import Testing

/// The start-up check that fence commands can write the fence file, and the state
/// directory's preparation with the system's reasons.
@Suite("Fence file access and the state directory")
struct FenceFileAccessTests {
    @Test func aReadOnlyFenceDirectoryWarnsWhileCommandsAreOn() {
        var settings = Settings()
        settings.fencesPath = "/etc/geotify/fences.json"
        let warning = FenceFileAccess.warning(settings: settings) { $0 != "/etc/geotify" }
        #expect(warning?.hasPrefix("fence commands are on but the fence file's directory /etc/geotify is not writable by this user") == true)
        #expect(warning?.hasSuffix("make it writable, or set \"commands\": false") == true)
        #expect(FenceFileAccess.warning(settings: settings) { _ in true } == nil)
        settings.commandsEnabled = false
        #expect(FenceFileAccess.warning(settings: settings) { _ in false } == nil)
    }

    @Test func theDirectoryIsThatOfTheFileALinkPointsTo() throws {
        let directory = try makeTemporaryDirectory("access")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("fences.json").path, withDestinationPath: "real/fences.json")
        #expect(FenceFileAccess.directory(of: directory.appendingPathComponent("fences.json").path) == directory.appendingPathComponent("real").path)
        #expect(FenceFileAccess.directory(of: "fences.json") == ".")
        var settings = Settings()
        settings.fencesPath = directory.appendingPathComponent("missing/fences.json").path
        #expect(FenceFileAccess.warning(settings: settings) != nil)
    }

    /// A fence directory is written in its devices/ (made in the directory itself at the
    /// first write), not in the directory that holds it.
    @Test func aFenceDirectoryIsCheckedWhereItsDeviceFilesAreWritten() throws {
        let directory = try makeTemporaryDirectory("access")
        let fences = directory.appendingPathComponent("fences")
        try FileManager.default.createDirectory(at: fences, withIntermediateDirectories: true)
        var settings = Settings()
        settings.fencesPath = fences.path + "/"
        var checked: [String] = []
        #expect(FenceFileAccess.warning(settings: settings) { checked.append($0); return true } == nil)
        try FileManager.default.createDirectory(at: fences.appendingPathComponent("devices"), withIntermediateDirectories: true)
        settings.fencesPath = fences.path
        let warning = FenceFileAccess.warning(settings: settings) { checked.append($0); return false }
        #expect(checked == [fences.path, fences.appendingPathComponent("devices").path])
        #expect(warning?.contains(fences.appendingPathComponent("devices").path) == true)
    }

    @Test func theStateDirectoryIsCreatedWithItsParents() throws {
        let directory = try makeTemporaryDirectory("state")
        let path = directory.appendingPathComponent("a/b/state").path
        try StateDirectory.prepare(path)
        try StateDirectory.prepare(path)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test func anUnusableStateDirectoryGivesTheSystemsReason() throws {
        let directory = try makeTemporaryDirectory("state")
        let file = directory.appendingPathComponent("file").path
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        #expect {
            try StateDirectory.prepare(file + "/state")
        } throws: { error in
            "\(error)" == "use state directory \(file)/state: mkdir \(file)/state: Not a directory"
        }
        #expect {
            try StateDirectory.prepare(file)
        } throws: { error in
            "\(error)" == "use state directory \(file): it exists and is not a directory"
        }
    }
}
