/// A `webhook` target: an HTTP POST of the notification JSON, exactly as the bridge
/// publishes it, with `Idempotency-Key: <event id>` (the same on every attempt) and a
/// `Geotify-Signature` over the attempt's time and the body.
package struct WebhookDestination: Sendable, Equatable {
    package var url: String
    /// The shared signing key.
    package var secret: Secret

    package init(url: String, secret: Secret) {
        self.url = url
        self.secret = secret
    }

    /// The POST for `event` sent at `now`; nil when the signature cannot be computed.
    package func request(for event: DeliveryEvent, at now: Double) -> HTTPRequest? {
        let timestamp = Int64(now.rounded(.down))
        guard let signature = WebhookSignature.value(secret: secret.value, timestamp: timestamp, body: event.payload) else {
            return nil
        }
        return HTTPRequest(url: url, headers: [
            .init("Content-Type", "application/json"),
            .init("Idempotency-Key", HTTPRequest.headerValue(event.id)),
            .init(WebhookSignature.header, signature),
        ], body: event.payload)
    }
}
