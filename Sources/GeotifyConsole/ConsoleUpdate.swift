import GeotifyJSON

/// A change the bridge reports to the console, which forwards it to the map pages live.
package enum ConsoleUpdate: Sendable, Equatable {
    /// A device's state after a fix (or a badge reset).
    case device(DeviceSnapshot)
    /// A notification as published on `geotify/event/<device>`.
    case notification(JSON)
    /// The fences changed (a command, an import, the file edited).
    case fencesChanged
}
