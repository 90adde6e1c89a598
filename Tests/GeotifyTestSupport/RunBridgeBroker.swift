import Foundation

/// The process id `scripts/run-bridge` reports for the mosquitto it started on `port`
/// ("started mosquitto on 127.0.0.1:PORT (pid N, ..."), if `output` holds that line.
package func runBridgeBrokerPID(in output: String, port: Int) -> Int32? {
    output.components(separatedBy: "started mosquitto on 127.0.0.1:\(port) (pid ").dropFirst().first
        .flatMap { Int32($0.prefix { $0.isNumber }) }
}

/// Whether the process `pid` has ended within `timeout` seconds. A test that checks a
/// broker it started is gone asks this of its process: its port may meanwhile belong to
/// another test's broker.
package func waitUntilEnded(pid: Int32, timeout: Double = 10) -> Bool {
    waitUntil(timeout: timeout) { kill(pid, 0) == -1 && errno == ESRCH }
}
