import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyTestSupport

@Suite("OwnTracks payload decryption")
struct OwnTracksDecryptionTests {
    static let location = #"{"_type":"location","lat":52.52,"lon":13.405,"acc":12,"tst":1700000000}"#
    static let fix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: 12, timestamp: 1_700_000_000)

    let decoder = LocationDecoder(
        maximumPayloadBytes: 65_536,
        keys: (try? OwnTracksKeys(parsing: Array("alice/phone s3cr1t\n".utf8), file: "keys")) ?? OwnTracksKeys())

    /// An envelope as the apps send it, sealed by libsodium with the key of `secret`.
    static func envelope(_ message: String, secret: String = "s3cr1t") throws -> [UInt8] {
        let box = try #require(SecretBox(key: OwnTracksKeys.key(secret: secret)))
        return envelope(data: SecretBox.base64(box.seal(Array(message.utf8))))
    }

    static func envelope(data: String) -> [UInt8] {
        Array(#"{"_type":"encrypted","data":"\#(data)"}"#.utf8)
    }

    /// The fix in `payload`, decoded as the bridge's lane decodes it.
    func fix(_ payload: [UInt8], device: String = "alice/phone") throws -> Fix? {
        try decoder.decode(payload, device: device, format: .ownTracks, arrival: 0)
    }

    func refusal(_ payload: [UInt8], device: String = "alice/phone") -> InputError? {
        do throws(InputError) {
            _ = try decoder.decode(payload, device: device, format: .ownTracks, arrival: 0)
            return nil
        } catch {
            return error
        }
    }

    @Test func aPayloadSealedByLibsodiumDecodesToItsFix() throws {
        #expect(try fix(Self.envelope(Self.location)) == Self.fix)
    }

    /// Made once with PyNaCl: `SecretBox(b"s3cr1t".ljust(32, b"\0")).encrypt(location,
    /// bytes(range(24)))` in base64: the apps' key and framing, from another binding.
    static let pinned = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXYrUczRiuSgq246IfPMb4DAh9SpLYIJtEk6tbuYJTmKuSqkGgHdahe9EW18ztdaaxKWTmqtKhC6bE+ttr00ZXem5tJQcr21xSv524J6fVuGTJQvnA5EkW"

    @Test func aPinnedPyNaClCiphertextDecrypts() throws {
        #expect(try fix(Self.envelope(data: Self.pinned)) == Self.fix)
        let envelope = try #require(try JSONParser().parse(Self.envelope(data: Self.pinned)).objectValue)
        #expect(try decoder.decryption.cleartext(ofData: envelope["data"], device: "alice/phone") == Array(Self.location.utf8))
    }

    @Test(.waiting) func aPayloadSealedByPyNaClNowDecrypts() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = root.appendingPathComponent(".build/python/bin/python3").path
        let script = """
            import base64, nacl.secret, nacl.utils, sys
            box = nacl.secret.SecretBox(sys.argv[1].encode().ljust(32, b"\\0"))
            print(base64.b64encode(bytes(box.encrypt(sys.argv[2].encode()))).decode())
            """
        let data = try runCommand(python, ["-c", script, "s3cr1t", Self.location]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try fix(Self.envelope(data: data)) == Self.fix)
    }

    @Test(.waiting) func whatLibsodiumSealsPyNaClOpens() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = root.appendingPathComponent(".build/python/bin/python3").path
        let box = try #require(SecretBox(key: OwnTracksKeys.key(secret: "s3cr1t")))
        let script = """
            import base64, nacl.secret, sys
            box = nacl.secret.SecretBox(sys.argv[1].encode().ljust(32, b"\\0"))
            sys.stdout.write(box.decrypt(base64.b64decode(sys.argv[2], validate=True)).decode())
            """
        #expect(try runCommand(python, ["-c", script, "s3cr1t", SecretBox.base64(box.seal(Array(Self.location.utf8)))]) == Self.location)
    }

    @Test func theDecryptedMessageIsTakenLikeAnyOther() throws {
        #expect(try fix(Self.envelope(#"{"_type":"lwt","tst":1}"#)) == nil)
        #expect(try refusal(Self.envelope(#"{"_type":"location","lat":95,"lon":1}"#))?.code == .outOfRange)
        let small = LocationDecoder(maximumPayloadBytes: 100)
        #expect(throws: InputError.self) { try small.decode(Self.envelope(String(repeating: " ", count: 100) + Self.location), device: "alice/phone", format: .ownTracks, arrival: 0) }
        // The plain format has no envelopes: one there is a message without a position.
        #expect(throws: InputError(.missingField, "missing \"lat\"")) {
            try decoder.decode(Self.envelope(data: Self.pinned), device: "alice/phone", format: .plain, arrival: 0)
        }
    }

    @Test func withoutAKeyForTheDeviceTheEnvelopeIsRefused() throws {
        let error = try #require(refusal(Self.envelope(Self.location), device: "bob/phone"))
        #expect(error.code == .noDecryptionKey)
        #expect(error.message.contains("\"bob/phone\"") && error.message.contains("owntracksKeysFile"))
        let none = LocationDecoder()
        #expect(throws: InputError(.noDecryptionKey, "no secret for the device \"alice/phone\" to decrypt its payload with; add a line \"alice/phone <secret>\" to the OwnTracks keys file (owntracksKeysFile)")) {
            try none.decode(Self.envelope(Self.location), device: "alice/phone", format: .ownTracks, arrival: 0)
        }
    }

    @Test func aDifferentSecretOrAnAlteredByteIsUndecryptable() throws {
        #expect(try refusal(Self.envelope(Self.location, secret: "s3cr1t!"))?.code == .undecryptable)
        let box = try #require(SecretBox(key: OwnTracksKeys.key(secret: "s3cr1t")))
        let sealed = box.seal(Array(Self.location.utf8))
        for index in [0, SecretBox.nonceBytes, SecretBox.nonceBytes + SecretBox.macBytes, sealed.count - 1] {
            var altered = sealed
            altered[index] ^= 1
            #expect(refusal(Self.envelope(data: SecretBox.base64(altered)))?.code == .undecryptable)
        }
        let short = refusal(Self.envelope(data: SecretBox.base64(Array(sealed.prefix(39)))))
        #expect(short?.code == .undecryptable)
        #expect(short?.message.contains("39 bytes") == true)
        #expect(refusal(Self.envelope(data: ""))?.code == .undecryptable)
    }

    @Test func dataThatIsNotStandardBase64IsRefused() {
        let data = Self.pinned
        #expect(data.contains("+"))
        let variants = [
            String(data.dropLast()),
            data.replacingOccurrences(of: "+", with: "-"),
            "\(data.prefix(8))\\n\(data.dropFirst(8))",
            "\(data.prefix(8)) \(data.dropFirst(8))",
            "%%%%",
        ]
        for bad in variants {
            #expect(refusal(Self.envelope(data: bad))?.code == .invalidBase64, "\(bad)")
        }
    }

    @Test func theEnvelopeNeedsADataString() {
        #expect(refusal(Array(#"{"_type":"encrypted"}"#.utf8))?.code == .invalidEnvelope)
        #expect(refusal(Array(#"{"_type":"encrypted","data":42}"#.utf8))?.message == "an encrypted OwnTracks message needs \"data\", a base64 string, not a number")
    }

    @Test func theCleartextMustBeAJSONObjectAndNotAnotherEnvelope() throws {
        #expect(try refusal(Self.envelope("lat=52.52"))?.code == .decryptedNotJSON)
        #expect(try refusal(Self.envelope("[1,2]"))?.message == "the decrypted payload must be a JSON object, not an array")
        #expect(try refusal(Self.envelope(""))?.code == .decryptedNotJSON)
        let inner = try String(decoding: Self.envelope(Self.location), as: UTF8.self)
        #expect(try refusal(Self.envelope(inner))?.code == .invalidEnvelope)
    }

    @Test func theWrapperRefusesKeysOfTheWrongLength() {
        #expect(SecretBox(key: []) == nil)
        #expect(SecretBox(key: [UInt8](repeating: 0, count: 31)) == nil)
        #expect(SecretBox(key: [UInt8](repeating: 0, count: 33)) == nil)
        #expect(SecretBox.base64([]) == "")
        #expect(SecretBox.base64([0xFB, 0xFF]) == "+/8=")
        #expect(SecretBox.bytes(base64: "+/8=") == [0xFB, 0xFF])
    }
}
