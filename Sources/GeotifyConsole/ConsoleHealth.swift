import GeotifyJSON

/// Whether the bridge can do its work: one check per thing it needs (the broker
/// connection, a writable state store, a valid fence file), each with its reason.
package struct ConsoleHealth: Sendable, Equatable {
    /// One thing the bridge needs.
    package struct Check: Sendable, Equatable {
        /// `broker`, `store`, `fences`.
        package var name: String
        package var ok: Bool
        /// What is wrong, or what is fine ("connected to mqtt://127.0.0.1:1883").
        package var detail: String

        package init(name: String, ok: Bool, detail: String) {
            self.name = name
            self.ok = ok
            self.detail = detail
        }
    }

    package var checks: [Check]

    package init(checks: [Check]) {
        self.checks = checks
    }

    /// Whether every check passed.
    package var isHealthy: Bool { checks.allSatisfy(\.ok) }

    /// `{"status": "ok" | "unhealthy", "reason": ..., "checks": {name: {"ok", "detail"}}}`;
    /// `reason` joins the failed checks' details.
    package var json: JSON {
        var object = JSONObject()
        object["status"] = isHealthy ? "ok" : "unhealthy"
        let failed = checks.filter { !$0.ok }
        if !failed.isEmpty {
            object["reason"] = .string(failed.map { "\($0.name): \($0.detail)" }.joined(separator: "; "))
        }
        var checkObject = JSONObject()
        for check in checks {
            checkObject[check.name] = ["ok": .bool(check.ok), "detail": .string(check.detail)]
        }
        object["checks"] = .object(checkObject)
        return .object(object)
    }
}
