import GeotifyCore

/// One way of evaluating a fix against the fences all devices share.
///
/// The core rows time two conformances side by side: `EvaluatedSharedFences` (the real
/// evaluator over a `SharedFences` set, through its index) and `ScannedSharedFences`
/// (every fence, as a plain linear scan, with `SharedPresence` bookkeeping), and check
/// that both give the same transitions.
protocol SharedFenceEvaluation: SendableMetatype {
    /// Evaluates fix `number` of the workload's stream for its device.
    mutating func evaluate(_ number: Int, tally: inout SharedTally)
}
