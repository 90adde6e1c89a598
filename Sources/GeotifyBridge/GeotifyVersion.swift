/// The version of this Geotify, as it tells Home Assistant (the `sw_version` of its
/// devices and of the discovery `origin`), so a user can see which bridge made the
/// entities. Raised with every release.
package enum GeotifyVersion {
    package static let current = "0.1.0"
}
