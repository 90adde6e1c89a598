import Foundation
import GeotifyCore
import GeotifyHTTP
import Testing

struct HTTPRefusalCodeTests {
    /// The rows of the table of refusals in docs/http.md (its "Hostile clients" section).
    static func documentedRefusals() throws -> [Substring] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/http.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let start = try #require(text.range(of: "\n## Hostile clients\n"), "docs/http.md has no Hostile clients section")
        let rest = text[start.upperBound...]
        let section = rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)]
        return section.split(separator: "\n").filter { $0.hasPrefix("| ") }
    }

    @Test func everyCodeIsInTheDocumentsTableOfRefusalsWithItsStatus() throws {
        let rows = try Self.documentedRefusals()
        #expect(rows.count > 10)
        for code in HTTPRefusalCode.allCases {
            // "413 `payload_too_large`"; a code no response carries is named alone.
            let entry = code.status.map { "\($0) `\(code.rawValue)`" } ?? "`\(code.rawValue)`"
            #expect(rows.contains { $0.contains(entry) }, "docs/http.md's table of refusals (Hostile clients) lacks \(entry)")
        }
    }

    @Test func aRefusalCarriesItsCodesStatusAndIsCountedUnderIt() {
        let refusal = HTTPResponse.refusal(.notFound, "nothing here")
        #expect(refusal.status == 404)
        #expect(refusal.refusalCode == .http(.notFound))
        #expect(refusal.refusalCounter == "http_refused.not_found")
        #expect(HTTPRefusalCode.tooFarBehind.counter == "http_refused.too_far_behind")
        #expect(HTTPRefusalCode.tooFarBehind.status == nil)
        #expect(HTTPRefusalCode.allCases.filter { $0.status == nil } == [.tooFarBehind], "only a closed stream is counted without an answer")
        let passed = HTTPResponse.refusal(status: 409, domainCode: .stale, "the fences changed")
        #expect(passed.status == 409)
        #expect(passed.refusalCounter == "http_refused.stale")
        #expect(HTTPResponse.json(["ok": true]).refusalCounter == nil)
    }
}
