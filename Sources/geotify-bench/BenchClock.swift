import Foundation

/// The clocks the bench reads: a monotonic one for durations and the wall clock for
/// timestamps that travel inside messages (publisher and observer share this process).
enum BenchClock {
    /// Monotonic time in seconds.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    /// CPU time of the calling thread in seconds: what a computation costs, without the
    /// time the thread waited for a core the machine's other work held.
    static func threadCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    /// Wall-clock time in seconds since 1970.
    static func wall() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    /// Waits up to `timeout` seconds for `condition`, checking every `interval` seconds;
    /// says whether it became true.
    static func wait(timeout: Double, interval: Double = 0.001, until condition: () -> Bool) -> Bool {
        let deadline = now() + timeout
        while !condition() {
            if now() > deadline { return false }
            usleep(UInt32(interval * 1_000_000))
        }
        return true
    }
}
