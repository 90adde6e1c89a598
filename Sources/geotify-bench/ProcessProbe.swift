import Foundation

/// What Linux says about a running process in `/proc/<pid>`: CPU time of all its
/// threads, memory, threads, command name. Read from outside, so the bench measures the
/// program it started (the bridge, mosquitto_sub, the broker) and nothing in between.
enum ProcessProbe {
    /// User plus system CPU seconds of all the threads of `pid` so far (`utime` and
    /// `stime` in `/proc/<pid>/stat`, in clock ticks); nil when it is gone.
    static func cpuSeconds(of pid: pid_t) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command name: the state is field 3 of the file, utime 14 and stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Waits (at most 30 s) until `cpu` (a process's CPU seconds so far) has grown by
    /// less than 5 ms in 0.3 s: the process has caught up with what it was given.
    static func waitUntilIdle(cpu: () -> Double?) -> Bool {
        var last = cpu() ?? 0
        var since = BenchClock.now()
        return BenchClock.wait(timeout: 30, interval: 0.05) {
            let now = cpu() ?? last
            if now - last >= 0.005 {
                last = now
                since = BenchClock.now()
            }
            return BenchClock.now() - since >= 0.3
        }
    }

    /// User plus system CPU seconds of this process so far.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The number in the `key:` line of `/proc/<pid>/status` (kB for sizes).
    static func status(of pid: pid_t, _ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            return line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
        }
        return nil
    }

    /// The command name the kernel has for `pid` (`/proc/<pid>/comm`, at most 15 bytes).
    static func command(of pid: pid_t) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The 1-minute load average.
    static func loadAverage() -> Double {
        var loads = [Double](repeating: 0, count: 3)
        return getloadavg(&loads, 3) > 0 ? loads[0] : 0
    }

    /// The processor's model name (the first `model name` of `/proc/cpuinfo`), "unknown"
    /// when it cannot be read: the hosts the bench runs on change, and a row is comparable
    /// with another only from the same processor.
    static func processorModel() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
              let colon = line.firstIndex(of: ":")
        else { return "unknown" }
        let name = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        return name.isEmpty ? "unknown" : name
    }

    static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) * 1e-6
    }
}
