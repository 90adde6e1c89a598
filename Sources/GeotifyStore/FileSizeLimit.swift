/// The most bytes read of one kind of file an operator names by path (a settings file, a
/// password, the OwnTracks keys, the console's users, a track to simulate, a TLS
/// certificate or key), and the words a refusal names it by.
///
/// Such a file is read whole, so each kind has a fixed cap far above any real one: a
/// FIFO, a device such as `/dev/zero` or a file of gigabytes given by mistake is refused
/// at once (`AtomicFile.read(_:within:)`), never read until the start hangs or the memory
/// is gone.
package struct FileSizeLimit: Sendable, Equatable {
    /// The most bytes accepted.
    package var bytes: Int
    /// What the refusal calls the limit.
    package var name: String

    package init(bytes: Int, name: String) {
        self.bytes = bytes
        self.name = name
    }

    /// A settings file: 1 MiB, about a thousand times a full one (its largest parts are
    /// the delivery targets' templates).
    package static let settings = FileSizeLimit(bytes: 1 << 20, name: "the limit for a settings file, 1 MiB")
    /// A password or secret file (the broker's password, a delivery target's token): one
    /// line, 64 KiB, the size of the longest password MQTT can carry.
    package static let secret = FileSizeLimit(bytes: 64 << 10, name: "the limit for a password or secret file, 64 KiB")
    /// The OwnTracks keys file: one line a device, 16 MiB (some 100 000 devices).
    package static let ownTracksKeys = FileSizeLimit(bytes: 16 << 20, name: "the limit for the OwnTracks keys file, 16 MiB")
    /// The web console's users file (htpasswd): 1 MiB, some 10 000 users.
    package static let users = FileSizeLimit(bytes: 1 << 20, name: "the limit for the users file, 1 MiB")
    /// A track for `geotify simulate` (GPX or OwnTracks JSON): 256 MiB, a million points
    /// and more.
    package static let track = FileSizeLimit(bytes: 256 << 20, name: "the limit for a track file, 256 MiB")
    /// A TLS file (a PEM bundle of CA certificates, a client certificate, its key), of
    /// the broker or of a notification target: 4 MiB, some twenty times the system's
    /// bundle of every trusted CA (210 KB on Debian). It is read to check it before
    /// libmosquitto or libcurl, which take it by path, open it themselves.
    package static let certificate = FileSizeLimit(bytes: 4 << 20, name: "the limit for a TLS certificate or key file, 4 MiB")
}
