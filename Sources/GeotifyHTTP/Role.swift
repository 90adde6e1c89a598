/// What a user of the web console may do. Given per user in the settings (`http.roles`).
package enum Role: String, Sendable, CaseIterable {
    /// See the map page, the JSON API's reads and the live stream.
    case read
    /// Change fences (add, edit, delete, import) and reset badges; includes `read`.
    case manage
    /// Post positions to `/pub` (OwnTracks HTTP mode) as the user's own devices.
    case tracker
    /// Scrape `/metrics`.
    case metrics

    /// The roles this one grants: itself, and `read` with `manage`.
    package var grants: Set<Role> {
        self == .manage ? [.manage, .read] : [self]
    }
}
