/// Sends what one attempt sends and brings back the answer: libcurl in the bridge
/// (`CurlTransport`); the worker only depends on this.
package protocol DeliveryTransport: Sendable {
    /// Performs `request`, taking at most `timeout` seconds, trusting the certificate
    /// authorities in `caFile` instead of the system's when given.
    func perform(_ request: DeliveryRequest, timeout: Double, caFile: String?) -> TransportResponse
}
