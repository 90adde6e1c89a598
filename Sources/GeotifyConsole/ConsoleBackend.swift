import GeotifyCore
import GeotifyJSON

/// What the web console needs from the bridge, and all it needs: the console's handlers
/// are written against this, so they are tested against a fake and the bridge supplies
/// the real thing.
///
/// Reads return what is in force at the moment; calls that run on the bridge's lanes
/// (commands, positions, imports) answer through a closure, from any thread, exactly
/// once. `observe` is called once, before the server starts; the bridge then reports
/// every change through the sink.
package protocol ConsoleBackend: Sendable {
    /// Every device the bridge keeps state for: last fix, badge and the fences it is in.
    func devices() -> [DeviceSnapshot]

    /// The fences in force: devices' own and the shared sets.
    func fenceBook() -> FenceBook

    /// Runs a command for `device`: `payload` is exactly what would be published on
    /// `geotify/cmd/<device>`, and `reply` gets exactly the document the bridge would
    /// publish on `geotify/reply/<device>` (`{"id", "action", "ok", ...}`).
    func run(command payload: [UInt8], device: String, reply: @escaping @Sendable (JSON) -> Void)

    /// Takes an OwnTracks message posted in HTTP mode as if it had arrived on
    /// `owntracks/<user>/<device>`: the same decoding, lane and outputs. `reply` gets the
    /// OwnTracks messages to return to the app (usually none), or the refusal with the
    /// error code the MQTT path would count (`invalid_json`, `out_of_range`, ...).
    func publish(owntracks payload: [UInt8], user: String, device: String, reply: @escaping @Sendable (Result<[JSON], ConsoleRefusal>) -> Void)

    /// Applies an import of fences (from GeoJSON) all or none, and reports the change
    /// (see `FenceImportPlan.write(to:)`, which does it for a fence file).
    func importFences(_ plan: FenceImportPlan, reply: @escaping @Sendable (Result<FenceImportPlan.Outcome, ConsoleRefusal>) -> Void)

    /// Whether the bridge can do its work, and if not why.
    func health() -> ConsoleHealth

    /// The counters, gauges and latency `/metrics` shows.
    func metrics() -> ConsoleMetrics

    /// Starts reporting changes to `sink`: each evaluated fix's device, each device
    /// forgotten, each notification, each change of the fences; a device's changes in
    /// the order they happened. Called once.
    func observe(_ sink: @escaping @Sendable (ConsoleUpdate) -> Void)
}
