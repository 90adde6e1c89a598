import GeotifyJSON

/// A change the bridge reports to the console, which forwards it to the map pages live.
package enum ConsoleUpdate: Sendable, Equatable {
    /// A device's state after a fix (or a badge reset).
    case device(DeviceSnapshot)
    /// The bridge forgot the device (the fence file stopped naming it, or it was idle
    /// and evicted to make room): the pages drop it.
    case deviceForgotten(String)
    /// A notification as published on `geotify/event/<device>`.
    case notification(JSON)
    /// The fences changed (a command, an import, the file edited).
    case fencesChanged
}
