/// What the command line asked for.
struct BenchOptions: Sendable {
    /// The scenarios that can be run, in the order `all` runs them (memory first, while
    /// the heap is fresh).
    enum Scenario: String, Sendable, CaseIterable {
        case memory, core, decode, e2e
    }

    var scenarios: [Scenario] = Scenario.allCases
    var json = false
    var quick = false
    var seed: UInt64 = 6
    /// Set in a child process the memory scenario starts to measure one structure on a
    /// fresh heap (`--memory-probe NAME`, not for people).
    var memoryProbe: MemoryScenario.Probe?

    /// Seconds each throughput measurement runs for.
    var budget: Double { quick ? 0.3 : 1.0 }

    static let usage = """
        usage: geotify-bench [core|decode|e2e|memory|all] [--quick] [--json] [--seed N]

        Builds a deterministic synthetic workload and prints one table: each row measured
        beside its baseline in the same run. `all` (the default) runs every scenario in a
        few minutes; --quick shortens each measurement (for a smoke run, not for numbers).
        """

    /// Parses the arguments (without the program name); nil with a message for a usage error.
    static func parse(_ arguments: [String]) -> Result<BenchOptions, UsageProblem> {
        var options = BenchOptions()
        var chosen: [Scenario]?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--json": options.json = true
            case "--quick": options.quick = true
            case "--seed":
                guard let text = remaining.popFirst(), let seed = UInt64(text) else {
                    return .failure(UsageProblem("--seed needs a whole number"))
                }
                options.seed = seed
            case "--memory-probe":
                guard let name = remaining.popFirst(), let probe = MemoryScenario.Probe(rawValue: name) else {
                    return .failure(UsageProblem("--memory-probe needs one of \(MemoryScenario.Probe.allCases.map(\.rawValue))"))
                }
                options.memoryProbe = probe
            case "-h", "--help", "help": return .failure(UsageProblem(nil))
            case "all": chosen = Scenario.allCases
            default:
                guard let scenario = Scenario(rawValue: argument) else {
                    return .failure(UsageProblem("unknown scenario or option \"\(argument)\""))
                }
                chosen = (chosen ?? []) + [scenario]
            }
        }
        if let chosen {
            options.scenarios = Scenario.allCases.filter { chosen.contains($0) }
        }
        return .success(options)
    }
}
