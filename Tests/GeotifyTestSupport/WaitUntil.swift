import Foundation
import GeotifyTime

/// Checks `condition` every 10 ms until it holds or `timeout` seconds have passed, and
/// says whether it held. Every wait in the tests goes through a bounded poll like this.
@discardableResult
package func waitUntil(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if condition() {
            return true
        }
        if Date() >= deadline {
            return false
        }
        Thread.sleep(forTimeInterval: 0.01)
    }
}

/// Moves `clock` on by `step` seconds before each look at `condition`, until it holds or
/// `timeout` seconds (real ones) have passed, and says whether it held: the wait for what
/// timers on a test's clock bring about (a back-off, a poll, a report), which come as
/// soon as the clock passes them instead of after seconds of real time.
@discardableResult
package func waitUntil(advancing clock: ManualScheduler, by step: Double, timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    waitUntil(timeout: timeout) {
        clock.advance(by: step)
        return condition()
    }
}
