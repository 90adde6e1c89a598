/// What one attempt sends: an HTTP POST or an e-mail. Built without I/O from the target
/// and the notification, so each service's request is tested byte for byte.
package enum DeliveryRequest: Sendable, Equatable {
    case http(HTTPRequest)
    case mail(MailMessage)
}
