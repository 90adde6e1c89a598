/// The names of the topics the bridge publishes to and takes commands from, all under
/// one prefix (`geotify` by default) so a deployment can run several bridges.
public struct Topics: Sendable, Equatable {
    public let prefix: String

    public init(prefix: String = "geotify") {
        self.prefix = prefix
    }

    /// Notifications of `device`: `geotify/event/<device>`.
    public func event(_ device: String) -> String { "\(prefix)/event/\(device)" }
    /// The retained badge count of `device`: `geotify/badge/<device>`.
    public func badge(_ device: String) -> String { "\(prefix)/badge/\(device)" }
    /// The bridge's retained `online` / `offline`: `geotify/status`.
    public var status: String { "\(prefix)/status" }
    /// Refused input and other failures: `geotify/error`.
    public var error: String { "\(prefix)/error" }
    /// Replies to commands for `device`: `geotify/reply/<device>`.
    public func reply(_ device: String) -> String { "\(prefix)/reply/\(device)" }
    /// Commands for devices: `geotify/cmd/<device>`.
    public var commands: String { "\(prefix)/cmd/#" }
}
