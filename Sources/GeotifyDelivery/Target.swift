import GeotifyStore

/// A place notifications are delivered to, as the settings describe it: its name, where
/// and how (`Destination`), which notifications (`TargetFilter`), the title and body
/// templates, and how hard and how long to try.
package struct Target: Sendable, Equatable {
    /// Unique among the targets; names its queue rows, its statistics and CLI arguments.
    package var name: String
    package var destination: Destination
    package var filter = TargetFilter()
    package var title = MessageTemplate.defaultTitle
    package var body = MessageTemplate.defaultBody
    package var limits = TargetLimits()
    /// Seconds one attempt may take, connecting included.
    package var timeout: Double = 30
    /// A PEM file of certificate authorities to trust instead of the system's (a
    /// self-hosted server with a private CA); TLS verification itself is never turned off.
    package var caFile: String?
    /// Seconds from queueing after which a failing delivery is dead-lettered.
    package var retryFor: Double = 86_400
    /// How many deliveries may wait for it, in all and per device, and how many dead
    /// letters are kept.
    package var bound = DeliveryBound()

    package init(name: String, destination: Destination) {
        self.name = name
        self.destination = destination
    }

    /// The title and body for `event`.
    package func content(for event: DeliveryEvent) -> MessageContent {
        MessageContent(title: title.render(event), body: body.render(event))
    }

    /// What an attempt at `now` sends for `event`; nil only when the webhook signature
    /// cannot be computed.
    package func request(for event: DeliveryEvent, at now: Double) -> DeliveryRequest? {
        switch destination {
        case .webhook(let webhook): webhook.request(for: event, at: now).map { .http($0) }
        case .ntfy(let ntfy): .http(ntfy.request(for: content(for: event)))
        case .gotify(let gotify): .http(gotify.request(for: content(for: event)))
        case .pushover(let pushover): .http(pushover.request(for: content(for: event), event: event))
        case .telegram(let telegram): .http(telegram.request(for: content(for: event)))
        case .email(let email): .mail(email.message(for: content(for: event), event: event, target: name, at: now))
        }
    }

    /// One attempt at delivering the queued notification `payload` at `now`, from reading
    /// it to the service's answer; blocks for at most the target's timeout.
    package func attempt(_ payload: [UInt8], at now: Double, through transport: DeliveryTransport) -> AttemptOutcome {
        let event: DeliveryEvent
        do {
            event = try DeliveryEvent(payload: payload)
        } catch {
            return .rejected(reason: "the queued notification is unreadable: \(error.reason)")
        }
        guard let request = request(for: event, at: now) else {
            return .failed(reason: "the webhook signature could not be computed (libcrypto failed)", retryAfter: nil)
        }
        return outcome(of: transport.perform(request, timeout: timeout, caFile: caFile), at: now)
    }

    /// How the attempt went, read the way the service means its answer, with the
    /// target's secrets blanked out of any text: out of a body before it is cut to its
    /// excerpt, so neither a whole secret nor the part of one a cut leaves survives.
    package func outcome(of response: TransportResponse, at now: Double) -> AttemptOutcome {
        let redaction = destination.redaction
        let outcome = switch destination {
        case .telegram(let telegram): telegram.outcome(of: response, now: now, redaction: redaction)
        default: AttemptOutcome(response, now: now, redaction: redaction)
        }
        return outcome.redacted(redaction.apply)
    }
}
