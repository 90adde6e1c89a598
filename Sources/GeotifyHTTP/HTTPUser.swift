/// Who made a request, as far as the server knows: the logged-in user and what they may
/// do, or, with authentication off, `anonymous` holding every role.
package struct HTTPUser: Sendable, Equatable {
    /// The user name; nil when authentication is off.
    package var name: String?
    package var roles: Set<Role>

    package init(name: String?, roles: Set<Role>) {
        self.name = name
        self.roles = Set(roles.flatMap(\.grants))
    }

    /// Anyone, when authentication is off (the server listens on a loopback address).
    package static let anonymous = HTTPUser(name: nil, roles: Set(Role.allCases))

    /// Whether the user has `role` (directly or through `manage`).
    package func has(_ role: Role) -> Bool {
        roles.contains(role)
    }
}
