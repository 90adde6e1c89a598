import Foundation

/// The mosquitto the tests start: Debian installs it as /usr/sbin/mosquitto, which is
/// not on an ordinary user's `PATH` (only root's), so that comes first, then the `PATH`;
/// nil when neither has one.
package func mosquittoExecutable() -> String? {
    let candidates = ["/usr/sbin/mosquitto"]
        + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/mosquitto" }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}
