import GeotifyStore

/// Decides which queued deliveries to attempt now and when to look again: pure, from the
/// queue's heads, the targets' limits and retry windows, what is under way, and the clock
/// value.
///
/// Only the oldest delivery of each (target, device) is a candidate, so a device's
/// notifications reach a target in order, even across retries. A candidate starts when
/// it is due, its target is not paused (or its retry window has ended: a pause never
/// holds a delivery's last attempt past the end of its window), under its concurrency and
/// within its rate limit; candidates go in order of due time. The plan says when the next
/// waiting candidate may start; completions and new deliveries make the worker plan again
/// anyway.
package enum DeliveryPlanner {
    /// The plan for one moment.
    package struct Plan: Sendable, Equatable {
        /// Deliveries to attempt now.
        package var start: [DeliveryRow] = []
        /// Deliveries for targets the settings no longer have.
        package var unknown: [DeliveryRow] = []
        /// The wall-clock time to plan again, if something waits for time to pass.
        package var wake: Double?
        /// The targets' traffic with the new starts.
        package var traffic: [String: TargetTraffic] = [:]
    }

    /// The plan at `now` for `heads` (the oldest delivery of each target and device,
    /// earliest due first); `retryFor` is each target's retry window in seconds (a target
    /// left out has none that ends).
    package static func plan(
        heads: [DeliveryRow], limits: [String: TargetLimits], retryFor: [String: Double] = [:], traffic: [String: TargetTraffic], now: Double
    ) -> Plan {
        var plan = Plan(traffic: traffic)
        for row in heads {
            let name = row.entry.target
            guard let limit = limits[name] else {
                plan.unknown.append(row)
                continue
            }
            var target = plan.traffic[name] ?? TargetTraffic()
            defer { plan.traffic[name] = target }
            guard !target.underWay.contains(row.id), target.underWay.count < limit.concurrency else { continue }
            let windowEnd = row.queued + (retryFor[name] ?? .infinity)
            let start = max(row.due, target.earliestStart(now: now, rate: limit.rate, windowEnd: windowEnd))
            if start <= now {
                target.started(row.id, at: now)
                plan.start.append(row)
            } else {
                plan.wake = min(plan.wake ?? start, start)
            }
        }
        return plan
    }
}
