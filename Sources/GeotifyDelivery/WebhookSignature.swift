/// The signature a webhook carries, in the scheme Stripe made familiar:
/// `Geotify-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
///
/// Signing the timestamp with the body lets a receiver refuse replays of an old request
/// (it checks that `t` is recent), and the `v1=` label leaves room for another scheme
/// later. Each attempt is signed anew with its own time; the `Idempotency-Key` stays the
/// same.
package enum WebhookSignature {
    /// The header's name.
    package static let header = "Geotify-Signature"

    /// The header's value for `body` sent at `timestamp`, or nil when libcrypto fails.
    package static func value(secret: String, timestamp: Int64, body: [UInt8]) -> String? {
        guard let mac = Digest.hmacSHA256(key: Array(secret.utf8), message: Array("\(timestamp).".utf8) + body) else { return nil }
        return "t=\(timestamp),v1=\(Digest.hex(mac))"
    }
}
