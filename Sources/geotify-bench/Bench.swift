import Foundation

/// The bench: runs the chosen scenarios and renders their rows as one table.
struct Bench {
    let options: BenchOptions

    /// Runs every chosen scenario and returns the table (or JSON) to print.
    func run() -> String {
        var rows: [BenchOptions.Scenario: [ResultRow]] = [:]
        let start = BenchClock.now()
        let load = ProcessProbe.loadAverage()
        for scenario in options.scenarios {
            switch scenario {
            case .memory: rows[scenario] = MemoryScenario(options: options).run()
            case .core: rows[scenario] = CoreScenario(options: options).run()
            case .decode: rows[scenario] = DecodeScenario(options: options).run()
            case .e2e: rows[scenario] = EndToEndScenario(options: options).run()
            case .sidebyside: rows[scenario] = SideBySideScenario(options: options).run()
            case .lane: rows[scenario] = LaneScenario(options: options).run()
            }
        }
        let order: [BenchOptions.Scenario] = [.core, .decode, .lane, .e2e, .sidebyside, .memory]
        let table = ResultTable(
            rows: order.flatMap { rows[$0] ?? [] },
            settings: [
                ("seed", String(options.seed)), ("quick", options.quick ? "yes" : "no"),
                ("cores", String(ProcessInfo.processInfo.activeProcessorCount)),
                ("processor", ProcessProbe.processorModel()),
                ("load average before", ResultRow.decimal(load, 2)),
                ("scenarios", options.scenarios.map(\.rawValue).joined(separator: ",")),
                ("took", ResultRow.format(BenchClock.now() - start, .seconds)),
            ])
        return options.json ? table.json() : table.markdown()
    }
}
