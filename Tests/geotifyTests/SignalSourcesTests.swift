import Dispatch
import Foundation
import Synchronization
import Testing
@testable import geotify

/// `geotify run`'s signal sources hear a signal sent the moment they are made.
@Suite("Signal sources")
struct SignalSourcesTests {
    /// libdispatch registers a signal source after `resume`, on a thread of its own, and a
    /// signal sent before that, set to be ignored, is lost: in a small program sending
    /// itself a signal right after `resume`, 20 runs of 20 lost it, and none once it
    /// waited for the registration. `make` waits, so signals sent at once are heard.
    /// Three signals whose default is to be ignored (each a chance to catch a source not
    /// yet registered), sent by this thread the moment `make` returns.
    @Test func signalsSentAsSoonAsTheSourcesAreMadeAreHeard() {
        let signals = [SIGUSR2, SIGWINCH, SIGURG]
        let heard = Mutex<Set<Int32>>([])
        let all = DispatchSemaphore(value: 0)
        let (sources, ready) = SignalSources.make(signals, queue: DispatchQueue(label: "signal-sources-test")) { number in
            if heard.withLock({ $0.insert(number); return $0.count == signals.count }) { all.signal() }
        }
        defer { sources.forEach { $0.cancel() } }
        #expect(ready)
        for number in signals { kill(getpid(), number) }
        #expect(all.wait(timeout: .now() + 30) == .success, "heard only \(heard.withLock { $0.sorted() }) of \(signals)")
    }
}
