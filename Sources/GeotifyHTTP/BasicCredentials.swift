import Foundation

/// A user name and password from an `Authorization: Basic ...` header (RFC 7617): what
/// browsers, the OwnTracks apps in HTTP mode and Prometheus send.
///
/// Parsing is pure; the password stays in this value only as long as the check takes and
/// is never logged or echoed in a message.
package struct BasicCredentials: Sendable, Equatable {
    package var user: String
    package var password: String

    package init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Why a header could not be read as credentials (for the 401's message; never
    /// containing what was sent).
    package enum Problem: Error, Sendable, Equatable {
        case missing
        case notBasic
        case malformed
    }

    /// Reads the `Authorization` header's value.
    package init(authorization: String?) throws(Problem) {
        guard let authorization, !authorization.isEmpty else { throw .missing }
        let parts = authorization.trimmingSpaces.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic" else { throw .notBasic }
        guard let data = Data(base64Encoded: String(parts[1]).trimmingSpaces),
              let text = String(data: data, encoding: .utf8),
              let colon = text.firstIndex(of: ":")
        else { throw .malformed }
        user = String(text[..<colon])
        password = String(text[text.index(after: colon)...])
        guard !user.isEmpty else { throw .malformed }
    }

    /// The header value for these credentials (for clients and tests).
    package var authorization: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
