import Dispatch
import Foundation

/// Dispatch sources for process signals that are listening when `make` returns.
///
/// A signal handled by a `DispatchSourceSignal` is set to be ignored first (else its
/// default action would end the process), and libdispatch registers the source with
/// the system after `resume`, on a thread of its own. A signal that comes in between is
/// ignored and lost. `geotify run` starts the bridge right after making its sources, and
/// a start may block at once (a fence directory's lock held by another process): a
/// SIGTERM sent then was never heard. So `make` waits for each source's registration
/// handler, which libdispatch runs once the source is registered.
enum SignalSources {
    /// How long `make` waits for the registrations, in seconds (`SignalSourcesTests` sees
    /// them within its 2 ms run; a process starved of CPU is not held longer than this).
    static let registrationTimeout = 5.0

    /// Sources for `signals`, each calling `handler` with its signal on `queue`, resumed
    /// and registered; `ready` is false when they were not all registered within
    /// `registrationTimeout` (they still are, later).
    static func make(
        _ signals: [Int32], queue: DispatchQueue, handler: @escaping @Sendable (Int32) -> Void
    ) -> (sources: [DispatchSourceSignal], ready: Bool) {
        let registered = DispatchGroup()
        let sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            return source
        }
        return (sources, registered.wait(timeout: .now() + registrationTimeout) == .success)
    }
}
