import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyJSON
import GeotifyTestSupport

@Suite("OwnTracks keys file")
struct OwnTracksKeysTests {
    func keys(_ text: String) throws(SettingsError) -> OwnTracksKeys {
        try OwnTracksKeys(parsing: Array(text.utf8), file: "keys")
    }

    func refusal(_ text: String) -> String? {
        do throws(SettingsError) {
            _ = try keys(text)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func theKeyIsTheSecretPaddedWithZeroBytesTo32() {
        #expect(OwnTracksKeys.key(secret: "s3cr1t") == Array("s3cr1t".utf8) + [UInt8](repeating: 0, count: 26))
        #expect(OwnTracksKeys.key(secret: "ü").count == 32)
        #expect(OwnTracksKeys.key(secret: "ü").prefix(3) == [0xC3, 0xBC, 0])
        let long = String(repeating: "x", count: 40)
        #expect(OwnTracksKeys.key(secret: long) == [UInt8](repeating: UInt8(ascii: "x"), count: 32))
    }

    /// A byte order mark (as Notepad writes one) made the first line's name
    /// "\u{FEFF}alice/phone": that device was then refused for want of a key, with the
    /// advice to add the line it had.
    @Test func aByteOrderMarkAtTheStartIsNotPartOfTheFirstName() throws {
        let marked = try OwnTracksKeys(parsing: ByteOrderMark.bytes + Array("alice/phone s3cr1t\nbob/tablet other\n".utf8), file: "keys")
        #expect(marked.key(for: "alice/phone") == OwnTracksKeys.key(secret: "s3cr1t"))
        #expect(marked.key(for: "bob/tablet") == OwnTracksKeys.key(secret: "other"))
        let comment = try OwnTracksKeys(parsing: ByteOrderMark.bytes + Array("# keys\nalice/phone s3cr1t\n".utf8), file: "keys")
        #expect(comment.key(for: "alice/phone") == OwnTracksKeys.key(secret: "s3cr1t"), "a first line that is a comment stays one")
        #expect(try keys("alice/phone \u{FEFF}s3cr1t").key(for: "alice/phone") == OwnTracksKeys.key(secret: "\u{FEFF}s3cr1t"),
                "only a mark at the start of the file is dropped")
    }

    @Test func aLineIsANameOneSpaceAndTheRestOfTheLineAsTheSecret() throws {
        let keys = try keys("""
            # comment
            alice/phone correct horse  battery staple

            bob/tablet s3cr1t\r
            """)
        #expect(keys.key(for: "alice/phone") == OwnTracksKeys.key(secret: "correct horse  battery staple"))
        #expect(keys.key(for: "bob/tablet") == OwnTracksKeys.key(secret: "s3cr1t"))
        #expect(keys.key(for: "carol/phone") == nil)
        #expect(keys.warnings.isEmpty)
        #expect(!keys.isEmpty)
        #expect(OwnTracksKeys().isEmpty)
    }

    @Test func anExactNameWinsOverARecorderKeyWhichWinsOverTheWildcard() throws {
        let keys = try keys("""
            jjolie-iphone recorder
            Jjolie/iPhone exact
            * everyone
            alice-my-phone spaced
            """)
        #expect(keys.key(for: "Jjolie/iPhone") == OwnTracksKeys.key(secret: "exact"))
        #expect(keys.key(for: "jjolie/iphone") == OwnTracksKeys.key(secret: "recorder"))
        #expect(keys.key(for: "Alice/My Phone") == OwnTracksKeys.key(secret: "spaced"))
        #expect(keys.key(for: "bob/phone") == OwnTracksKeys.key(secret: "everyone"))
        #expect(OwnTracksKeys.recorderName(of: "Jjolie/iPhone") == "jjolie-iphone")
    }

    @Test func longSecretsAndTrailingSpacesWarn() throws {
        let keys = try keys("alice/phone \(String(repeating: "k", count: 33))\nbob/phone secret \n")
        #expect(keys.warnings.count == 2)
        #expect(keys.warnings[0].contains("keys:1") && keys.warnings[0].contains("33 bytes"))
        #expect(keys.warnings[1].contains("keys:2") && keys.warnings[1].contains("white space"))
        #expect(keys.key(for: "bob/phone") == OwnTracksKeys.key(secret: "secret "))
    }

    @Test func badLinesAreRefusedWithTheirNumber() {
        #expect(refusal("# keys\nalice/phone") == "keys:2: a line is a device name, one space, then its secret; this one has no space")
        #expect(refusal(" alice/phone s") == "keys:1: the line starts with a space; it must start with the device name")
        #expect(refusal("alice/phone ") == "keys:1: the secret of \"alice/phone\" is empty")
        #expect(refusal("alice/phone a\nalice/phone b") == "keys:2: \"alice/phone\" has a secret already, on an earlier line")
    }

    @Test func aFileReadableByOthersWarnsAndAMissingOneIsRefused() throws {
        let directory = try makeTemporaryDirectory("owntracks-keys")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys").path
        #expect(throws: SettingsError.self) { try OwnTracksKeys(contentsOf: path) }
        try Data("alice/phone s3cr1t\n".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let open = try OwnTracksKeys(contentsOf: path)
        #expect(open.warnings == ["the OwnTracks keys file \(path) is readable by other users; chmod 600 it"])
        #expect(open.key(for: "alice/phone") == OwnTracksKeys.key(secret: "s3cr1t"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try OwnTracksKeys(contentsOf: path).warnings.isEmpty)
    }

    @Test func aKeysPathThatIsNotARegularFileIsRefusedUnread() throws {
        let directory = try makeTemporaryDirectory("owntracks-keys")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("keys").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in ["/dev/null", fifo] {
            #expect {
                _ = try OwnTracksKeys(contentsOf: path)
            } throws: { error in
                (error as? SettingsError)?.message.contains("cannot read the OwnTracks keys file \(path): read \(path): not a regular file") == true
            }
        }
    }

    @Test func aFileWithWindowsLineBreaksReadsEveryLine() throws {
        let keys = try keys("# secrets\r\nalice/phone s3cr1t\r\nbob/tablet other\r\n")
        #expect(keys.key(for: "alice/phone") == OwnTracksKeys.key(secret: "s3cr1t"))
        #expect(keys.key(for: "bob/tablet") == OwnTracksKeys.key(secret: "other"))
        #expect(keys.warnings.isEmpty)
    }

    @Test func aSecretOfExactly32BytesDoesNotWarn() throws {
        let keys = try keys("alice/phone \(String(repeating: "k", count: 32))\n")
        #expect(keys.warnings.isEmpty)
    }

    @Test func aFileTheGroupMayReadWarns() throws {
        let directory = try makeTemporaryDirectory("owntracks-keys")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys").path
        try Data("alice/phone s3cr1t\n".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        #expect(try OwnTracksKeys(contentsOf: path).warnings == ["the OwnTracks keys file \(path) is readable by other users; chmod 600 it"])
    }
}
