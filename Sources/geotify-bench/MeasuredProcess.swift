import Foundation

/// A program the bench runs as a child of its own (no shell in between) and measures
/// from outside: CPU time of all its threads and its peak resident memory, read from
/// `/proc/<pid>` while it runs, and its CPU time from `wait4`'s resource usage when it
/// ends, so a consumer that exits by itself (`mosquitto_sub -C N`) is measured up to its
/// last message too. (Not `ru_maxrss`: Linux counts in it the memory of the bench
/// itself, which the child shared until its `exec`.)
///
/// Spawned with `posix_spawn` rather than Foundation's `Process`, which reaps its
/// children itself and so would take the exit and its resource usage away from here.
final class MeasuredProcess: Sendable {
    /// How a process ended: when (monotonic), its status, and its whole life's usage.
    struct Exit: Sendable {
        /// When `wait4` returned, on `BenchClock.now()`.
        var time: Double
        /// The raw wait status.
        var status: Int32
        /// User plus system CPU seconds of all its threads over its whole life.
        var cpuSeconds: Double

        /// Whether it exited by itself with status 0.
        var succeeded: Bool { status & 0x7F == 0 && (status >> 8) & 0xFF == 0 }
    }

    let pid: pid_t
    let name: String
    /// Set once by the thread that waits for the exit; read through `exit`.
    private let ended = Locked<Exit?>(nil)

    /// Starts `executable` with `arguments`, standard input from /dev/null and standard
    /// output to `output` (/dev/null when nil); standard error to the same place, or
    /// the bench's own standard error when `sharesStandardError`. A thread waits for its exit.
    init(_ executable: String, _ arguments: [String], output: String? = nil, sharesStandardError: Bool = false) throws {
        name = (executable as NSString).lastPathComponent
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if !sharesStandardError { posix_spawn_file_actions_adddup2(&actions, 1, 2) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, nil, argv, environ)
        guard code == 0 else {
            throw BenchError("could not start \(executable): \(String(cString: strerror(code)))")
        }
        pid = child
        let ended = ended
        let spawned = child
        Thread.detachNewThread {
            var status: Int32 = 0
            var usage = rusage()
            var result: pid_t
            repeat {
                result = wait4(spawned, &status, 0, &usage)
            } while result < 0 && errno == EINTR
            let time = BenchClock.now()
            let cpu = ProcessProbe.seconds(usage.ru_utime) + ProcessProbe.seconds(usage.ru_stime)
            ended.withLock {
                $0 = Exit(time: time, status: result == spawned ? status : -1, cpuSeconds: cpu)
            }
        }
    }

    /// How it ended; nil while it runs.
    var exit: Exit? { ended.value }

    /// User plus system CPU seconds of all its threads so far; nil once it has ended.
    func cpuSeconds() -> Double? {
        ProcessProbe.cpuSeconds(of: pid)
    }

    /// Its peak resident set size so far in bytes (`VmHWM`).
    func peakResidentBytes() -> Int? {
        ProcessProbe.status(of: pid, "VmHWM").map { $0 * 1024 }
    }

    /// Waits up to `timeout` seconds for it to end, reading its peak RSS every 5 ms
    /// meanwhile (the last reading before it ends is its peak, give or take what it
    /// allocates in its last milliseconds); returns how it ended and that peak.
    func waitForExit(timeout: Double) -> (exit: Exit?, peakResidentBytes: Int) {
        var peak = 0
        _ = BenchClock.wait(timeout: timeout, interval: 0.005) {
            if let reading = peakResidentBytes() { peak = max(peak, reading) }
            return exit != nil
        }
        return (exit, peak)
    }

    /// Asks it to stop (SIGTERM), waits up to `timeout` seconds, then kills it.
    @discardableResult
    func stop(timeout: Double = 20) -> Exit? {
        if exit == nil { kill(pid, SIGTERM) }
        if let exit = waitForExit(timeout: timeout).exit { return exit }
        kill(pid, SIGKILL)
        return waitForExit(timeout: 5).exit
    }
}
