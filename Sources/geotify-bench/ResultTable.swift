import GeotifyJSON

/// The bench's output: one Markdown table of every row (ready to paste into
/// BENCHMARKS.md), or the same as JSON for machines.
struct ResultTable {
    var rows: [ResultRow]
    /// How the run was made (seed, quick, cores, ...), printed above the table.
    var settings: [(String, String)]

    func markdown() -> String {
        var lines = ["Run: " + settings.map { "\($0.0) \($0.1)" }.joined(separator: ", "), ""]
        lines.append("| scenario | measure | Geotify | baseline | vs baseline | target | met | notes |")
        lines.append("|---|---|---:|---|---:|---|---|---|")
        for row in rows {
            let baseline = row.baseline.map { "\(ResultRow.format($0, row.unit)) (\(row.baselineName ?? ""))" } ?? ""
            let versus = row.versusBaseline.map { "\(ResultRow.decimal($0, 2))×" } ?? ""
            let met = row.met.map { $0 ? "yes" : "**no**" } ?? ""
            lines.append("| \(row.scenario) | \(row.measure) | \(ResultRow.format(row.value, row.unit)) | \(baseline) | \(versus) | \(row.targetText) | \(met) | \(row.detail) |")
        }
        return lines.joined(separator: "\n")
    }

    func json() -> String {
        var root = JSONObject()
        root["settings"] = .object(JSONObject(settings.map { JSONObject.Member(key: $0.0, value: .string($0.1)) }))
        root["rows"] = .array(rows.map { row in
            var object = JSONObject()
            object["scenario"] = .string(row.scenario)
            object["measure"] = .string(row.measure)
            object["value"] = .number(row.value)
            object["unit"] = .string(row.unit.rawValue)
            if let baseline = row.baseline { object["baseline"] = .number(baseline) }
            if let name = row.baselineName { object["baselineName"] = .string(name) }
            if let versus = row.versusBaseline { object["versusBaseline"] = .number(versus) }
            if row.target != nil { object["target"] = .string(row.targetText) }
            if let met = row.met { object["met"] = .bool(met) }
            if !row.detail.isEmpty { object["detail"] = .string(row.detail) }
            return .object(object)
        })
        return JSONWriter(pretty: true).string(.object(root))
    }
}
