import GeotifyConsole
import GeotifyCore
import GeotifyHTTP
import Testing

/// The HTTP layer's refusal codes (`HTTPRefusalCode`) and the bridge's (`ErrorCode`) go
/// out in the same field and are counted under the same `http_refused.<code>`, so a code
/// both hold must mean the same in both.
struct RefusalCodeTests {
    /// The codes both hold, and why each means the same in both:
    /// - `not_allowed`: the asker may not do this. Over HTTP a login without the role the
    ///   route needs; in the bridge a user or device that may not make that change, post
    ///   for another user or be answered on that topic. 403 either way.
    /// - `payload_too_large`: more bytes than are accepted. Over HTTP a body past
    ///   `maximumBodyBytes`; in the bridge a position or command payload past its limit.
    ///   413 either way.
    static let shared: Set<String> = ["not_allowed", "payload_too_large"]

    @Test func aCodeBothVocabulariesHoldIsOneWithTheSameMeaningAndStatus() {
        let domain = Set(ErrorCode.allCases.map(\.rawValue))
        let http = Set(HTTPRefusalCode.allCases.map(\.rawValue))
        #expect(domain.intersection(http) == Self.shared)
        for code in Self.shared {
            #expect(HTTPRefusalCode(rawValue: code)?.status == ErrorCode(rawValue: code).map(ReplyStatus.status(for:)), "\(code)")
        }
    }

    /// A command's HTTP status for each error code, as docs/http.md lists them.
    @Test func eachErrorCodeHasTheStatusTheDocumentationGives() {
        let statuses: [ErrorCode: Int] = [
            .invalidJSON: 400, .missingField: 400, .outOfRange: 400, .invalidValue: 400,
            .notAllowed: 403, .readOnly: 403, .unknownDevice: 404, .unknownFence: 404, .unknownToken: 404,
            .duplicateIdentifier: 409, .fenceLimit: 409, .stale: 409, .expiredToken: 410, .otherShard: 421,
            .payloadTooLarge: 413, .rateLimited: 429, .io: 500, .stateWrite: 500, .fenceFile: 500, .invalidFile: 503,
        ]
        for (code, status) in statuses {
            #expect(ReplyStatus.status(for: code) == status, "\(code.rawValue)")
        }
    }

    @Test func theBridgesRefusalIsAnsweredWithItsCodesStatus() {
        let refusal = ConsoleRefusal(.stale, "the fences changed since the preview").response
        #expect(refusal.status == 409)
        #expect(refusal.refusalCode == .domain(.stale))
        #expect(ConsoleRefusal(.invalidImport, "not GeoJSON").response.status == 400)
    }
}
