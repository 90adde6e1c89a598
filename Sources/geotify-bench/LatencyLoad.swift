import Foundation

extension SideBySideScenario.Latency {
    /// How busy the machine and the processes of a latency run were while it sent.
    ///
    /// Why: the latency run's messages go through the bench's publisher, the broker, the
    /// bridge and the bench's observer, all on the same cores; when they keep the cores
    /// busy, a message waits for one. So a row with a latency says how busy the machine
    /// was, for the bridge's run and for the broker alone, and how much of it was the
    /// broker, the bridge and the bench itself.
    struct Load: Sendable {
        /// Shares of all CPUs' time: busy, and taken by the hypervisor (`MachineLoad`).
        var machine: (busy: Double, stolen: Double)?
        /// CPU seconds a second of the broker and of the consumer timed (the bridge;
        /// nil for the broker alone): 1 is one core.
        var broker: Double?
        var consumer: Double?
        /// CPU seconds a second of this program: the publisher and the observer.
        var bench: Double?

        /// Measures `send` (which returns its result) with the broker `broker` and the
        /// consumer `consumer` (nil for none).
        static func during<Result>(broker: pid_t, consumer: pid_t?, _ send: () -> Result) -> (Result, Load) {
            let machine = MachineLoad.now()
            let brokerCPU = ProcessProbe.cpuSeconds(of: broker)
            let consumerCPU = consumer.flatMap(ProcessProbe.cpuSeconds(of:))
            let benchCPU = ProcessProbe.ownCPUSeconds()
            let start = BenchClock.now()
            let result = send()
            let seconds = BenchClock.now() - start
            let share = { (before: Double?, after: Double?) -> Double? in
                guard let before, let after, seconds > 0 else { return nil }
                return (after - before) / seconds
            }
            return (result, Load(
                machine: machine.flatMap { before in MachineLoad.now()?.since(before) },
                broker: share(brokerCPU, ProcessProbe.cpuSeconds(of: broker)),
                consumer: share(consumerCPU, consumer.flatMap(ProcessProbe.cpuSeconds(of:))),
                bench: share(benchCPU, ProcessProbe.ownCPUSeconds())))
        }

        var summary: String {
            var parts: [String] = []
            if let machine {
                parts.append("the machine \(Load.percent(machine.busy)) busy"
                    + (machine.stolen >= 0.005 ? " and \(Load.percent(machine.stolen)) stolen" : "")
                    + " (\(ProcessInfo.processInfo.activeProcessorCount) cores)")
            }
            if let broker { parts.append("the broker \(Load.percent(broker)) of a core") }
            if let consumer { parts.append("Geotify \(Load.percent(consumer)) of one") }
            if let bench { parts.append("the bench's publisher and observer \(Load.percent(bench))") }
            return parts.joined(separator: ", ")
        }

        /// A share as whole percent: "37 %".
        private static func percent(_ share: Double) -> String {
            "\(Int((share * 100).rounded())) %"
        }
    }
}
