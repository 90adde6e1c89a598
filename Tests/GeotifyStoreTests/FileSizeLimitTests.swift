import Foundation
import GeotifyStore
import Testing

/// Each kind of file an operator names by path is read up to the size its documentation
/// gives, and refused one byte past it, unread, naming the limit.
@Suite("File size limits")
struct FileSizeLimitTests {
    let directory = TemporaryDirectory()

    /// The limits as docs/security.md gives them.
    static let documented: [(FileSizeLimit, Int)] = [
        (.settings, 1 << 20), (.secret, 64 << 10), (.ownTracksKeys, 16 << 20), (.users, 1 << 20), (.track, 256 << 20),
        (.certificate, 4 << 20),
    ]

    @Test func eachKindOfFileIsRefusedOneBytePastItsDocumentedSize() throws {
        let path = directory.file("file")
        _ = directory.write("", to: "file")
        for (limit, bytes) in Self.documented {
            #expect(truncate(path, off_t(bytes + 1)) == 0, "a sparse file past the limit")
            let error = #expect(throws: StoreError.self, "\(limit.name)") { try AtomicFile.read(path, within: limit) }
            #expect(error?.reason == "the file is \(bytes + 1) bytes; at most \(bytes) are accepted (\(limit.name))")
        }
    }

    /// The small limits, read whole at exactly their size (the larger ones are the same
    /// comparison, and would cost the test their size in memory).
    @Test func aSettingsSecretOrUsersFileOfExactlyItsLimitIsRead() throws {
        let path = directory.file("file")
        _ = directory.write("", to: "file")
        for (limit, bytes) in Self.documented where bytes <= 1 << 20 {
            #expect(truncate(path, off_t(bytes)) == 0)
            #expect(try AtomicFile.read(path, within: limit)?.count == bytes, "\(limit.name)")
        }
    }
}
