import Foundation
import GeotifyHTTP
import GeotifyTestSupport
import Testing

@Suite struct CredentialsTests {
    @Test func basicCredentialsRoundTrip() throws {
        let credentials = BasicCredentials(user: "alice", password: "pa:ss wörd")
        #expect(try BasicCredentials(authorization: credentials.authorization) == credentials)
    }

    @Test func headersThatAreNotBasicCredentialsAreRefusedWithoutEchoingThem() {
        #expect(throws: BasicCredentials.Problem.missing) { try BasicCredentials(authorization: nil) }
        #expect(throws: BasicCredentials.Problem.notBasic) { try BasicCredentials(authorization: "Bearer abc") }
        #expect(throws: BasicCredentials.Problem.malformed) { try BasicCredentials(authorization: "Basic !!!") }
        #expect(throws: BasicCredentials.Problem.malformed) {
            try BasicCredentials(authorization: "Basic " + Data("no-colon".utf8).base64EncodedString())
        }
    }

    @Test func aUsersFileReadsNamesAndHashesAndSkipsCommentsAndBlankLines() throws {
        let text = "# users\n\nalice:$2y$05$abc\r\nbob:$y$j9T$salt$hash\n"
        let users = try UsersFile(parsing: text, file: "users")
        #expect(users.hashes == ["alice": "$2y$05$abc", "bob": "$y$j9T$salt$hash"])
    }

    /// A byte order mark at the start made the first user "\u{FEFF}alice", who could then
    /// never log in as alice.
    @Test func aByteOrderMarkAtTheStartIsNotPartOfTheFirstUser() throws {
        let users = try UsersFile(parsing: "\u{FEFF}alice:$2y$05$abc\nbob:$2y$05$def\n", file: "users")
        #expect(users.hashes == ["alice": "$2y$05$abc", "bob": "$2y$05$def"])
        #expect(try UsersFile(parsing: "\u{FEFF}# users\nalice:$2y$05$abc\n", file: "users").hashes == ["alice": "$2y$05$abc"])
    }

    @Test func weakHashesAndBadLinesAreRefusedNamingEveryLine() {
        let text = "alice:$apr1$x$y\nbob:{SHA}abc=\ncarol:hunter2\nno colon\n:$2y$05$x\ndave:$2y$05$a\ndave:$2y$05$b\n"
        do {
            _ = try UsersFile(parsing: text, file: "users")
            Issue.record("accepted")
        } catch {
            let lines = error.message.split(separator: "\n")
            #expect(lines.count == 6)
            #expect(lines[0].hasPrefix("users:1: user \"alice\": Apache MD5"))
            #expect(lines[1].hasPrefix("users:2: user \"bob\": SHA-1"))
            #expect(lines[2].hasPrefix("users:3: user \"carol\": not a supported"))
            #expect(lines[3] == "users:4: not \"name:hash\"")
            #expect(lines[4] == "users:5: the user name is empty")
            #expect(lines[5] == "users:7: user \"dave\" appears twice")
            #expect(!error.message.contains("hunter2"))
        }
    }

    @Test func aHashMadeByHtpasswdVerifies() throws {
        let line = try runCommand("htpasswd", ["-nbB", "-C", "5", "alice", "s3cret"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let users = try UsersFile(parsing: line, file: "users")
        let hash = try #require(users.hashes["alice"])
        #expect(hash.hasPrefix("$2y$05$"))
        #expect(PasswordHash.verify("s3cret", against: hash))
        #expect(!PasswordHash.verify("s3cret ", against: hash))
        #expect(!PasswordHash.verify("", against: hash))
    }

    @Test func theDecoyIsARealBcryptHash() {
        #expect(PasswordHash.verify("not a password", against: PasswordHash.decoy))
    }

    @Test func anUnknownHashMethodNeverVerifies() {
        #expect(!PasswordHash.verify("x", against: "$zz$nothing"))
        #expect(!PasswordHash.verify("x", against: ""))
    }

    @Test func aHashThatDiffersOnlyBeforeItsLastCharacterDoesNotVerify() {
        let hash = AuthenticatorTests.hash
        #expect(PasswordHash.verify("s3cret", against: hash))
        var characters = Array(hash)
        let index = characters.count - 10
        characters[index] = characters[index] == "a" ? "b" : "a"
        #expect(!PasswordHash.verify("s3cret", against: String(characters)), "every byte of the hash is compared, not the last one")
    }

    @Test func anEmptyUserNameIsMalformed() {
        #expect(throws: BasicCredentials.Problem.malformed) {
            try BasicCredentials(authorization: "Basic " + Data(":s3cret".utf8).base64EncodedString())
        }
    }
}
