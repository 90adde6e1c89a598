import Foundation

/// How busy the whole machine was over a stretch of time: the first line of
/// `/proc/stat` (every CPU's clock ticks by kind) read at its start and at its end. The
/// latency runs report it (`SideBySideScenario.Latency.Load`): the bench's publisher and
/// observer, the broker and the bridge share the cores, so how busy they were explains
/// much of a latency's tail.
struct MachineLoad: Sendable, Equatable {
    /// Clock ticks of all CPUs spent running something (user, nice, system, irq, softirq).
    var busy: UInt64
    /// Clock ticks the hypervisor ran something else instead (steal).
    var stolen: UInt64
    /// Clock ticks of every kind, idle and waiting for I/O included.
    var total: UInt64

    /// The counters now; nil when `/proc/stat` cannot be read.
    static func now() -> MachineLoad? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        return parse(text)
    }

    /// The counters of `/proc/stat`'s text: its `cpu` line, the sum over all CPUs.
    static func parse(_ text: String) -> MachineLoad? {
        guard let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        // user nice system idle iowait irq softirq steal (guest time is within user).
        guard ticks.count >= 8 else { return nil }
        return MachineLoad(
            busy: ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6], stolen: ticks[7], total: ticks[..<8].reduce(0, +))
    }

    /// The share of all CPUs' time busy and stolen between `earlier` and this reading;
    /// nil when no tick passed.
    func since(_ earlier: MachineLoad) -> (busy: Double, stolen: Double)? {
        guard total > earlier.total else { return nil }
        let total = Double(self.total - earlier.total)
        return (Double(busy &- earlier.busy) / total, Double(stolen &- earlier.stolen) / total)
    }
}
