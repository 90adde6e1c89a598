/// The outbox rows handed to the broker at QoS 1 and not yet acknowledged, oldest first:
/// everything before the oldest was acknowledged, which is the outbox's acknowledged
/// mark (`Publisher`). Rows are handed over in the order of their ids and acknowledged in
/// any order, so the oldest is kept at hand instead of searched for among the whole
/// in-flight window at every acknowledgement, which was 4 % of the bridge's CPU under
/// position traffic (a window of 100, an acknowledgement for every message published).
struct RowsInFlight: Sendable {
    /// The rows handed over, in ascending order, from `head` on; those before `head` are
    /// acknowledged.
    private var rows: [Int64] = []
    private var head = 0
    /// Rows acknowledged while an older one was still in flight.
    private var acknowledgedEarly: Set<Int64> = []

    /// The oldest row in flight, nil when none is.
    var oldest: Int64? { head < rows.count ? rows[head] : nil }

    /// Records that `row`, newer than every row handed over before, was handed over.
    mutating func handed(_ row: Int64) {
        assert(rows.last.map { $0 < row } ?? true, "outbox rows are handed over in the order of their ids")
        rows.append(row)
    }

    /// Records the broker's acknowledgement of `row`.
    mutating func acknowledged(_ row: Int64) {
        guard row == oldest else {
            acknowledgedEarly.insert(row)
            return
        }
        head += 1
        while let next = oldest, acknowledgedEarly.remove(next) != nil { head += 1 }
        if head == rows.count {
            rows.removeAll(keepingCapacity: rows.count <= 1_024)
            head = 0
        } else if head > 1_024 && head * 2 > rows.count {
            rows.removeFirst(head)
            head = 0
        }
    }
}
