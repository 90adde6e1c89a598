import Foundation

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
