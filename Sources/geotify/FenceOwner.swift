import GeotifyCore
import GeotifyStore

/// Whose fences a `geotify fences` subcommand reads or changes: one device's own list,
/// or a shared set (`--shared`: the fences shared with every device; `--group NAME`:
/// those shared with a group). Every subcommand names its list the same way, so a
/// shared set is never reached through a device called `shared` or a group's name.
enum FenceOwner: Equatable, CustomStringConvertible {
    /// The device's own fences.
    case device(String)
    /// A shared set: `SharedFences.everyDevice` or a group's name.
    case shared(String)

    /// The option that names a group's shared set.
    static let group = CommandOption(name: "group", placeholder: "NAME", help: "the fences shared with the group NAME instead of a device's")
    /// The switch that names the fences shared with every device.
    static let shared = CommandOption(name: "shared", placeholder: nil, help: "the fences shared with every device instead of a device's")

    /// The shared set `--shared` or `--group NAME` name in `arguments`; nil when neither
    /// is given. Both together, or `--group shared`, are usage errors.
    static func sharedSet(_ arguments: Arguments) throws(UsageError) -> FenceOwner? {
        let group = arguments.value("group")
        if arguments.isSet("shared") {
            guard group == nil else {
                throw UsageError("--shared and --group exclude each other: --shared is every device's set, --group NAME a group's", command: "fences")
            }
            return .shared(SharedFences.everyDevice)
        }
        guard let group else { return nil }
        guard group != SharedFences.everyDevice else {
            throw UsageError("\"\(SharedFences.everyDevice)\" is not a group: --shared names the fences shared with every device", command: "fences")
        }
        return .shared(group)
    }

    /// The list `arguments` name and the other positional arguments, which must be
    /// exactly `positionals` (names for messages; a first "DEVICE" is the device, "[DEVICE]"
    /// one that may be left out). `--shared` or `--group NAME` stand in for the device;
    /// a subcommand without a device takes them alone. `usage` is the subcommand's
    /// synopsis, for messages.
    static func parse(
        _ arguments: Arguments, positionals: [String], usage: String
    ) throws(UsageError) -> (owner: FenceOwner?, names: [String]) {
        let set = try sharedSet(arguments)
        var expected = positionals
        var optional = false
        if let first = expected.first, first == "DEVICE" || first == "[DEVICE]" {
            optional = first == "[DEVICE]"
            if set != nil { expected.removeFirst() } else { expected[0] = "DEVICE" }
        }
        var given = arguments.positionals
        if given.count < expected.count, !(optional && set == nil && given.isEmpty && expected.count == 1) {
            throw UsageError("missing \(expected[given.count...].joined(separator: " and ")); usage: geotify fences \(usage)", command: "fences")
        }
        if given.count > expected.count {
            throw UsageError("unexpected argument \"\(given[expected.count])\"; usage: geotify fences \(usage)", command: "fences")
        }
        if set != nil || expected.first != "DEVICE" || given.isEmpty { return (set, given) }
        return (.device(given.removeFirst()), given)
    }

    /// The list's fences in `book`; refuses a device the file does not name and a group
    /// it does not define. The fences shared with every device may be none.
    func fences(in book: FenceBook) throws(FenceChangeError) -> [Fence] {
        switch self {
        case .device(let device):
            guard let fences = book.devices[device] else { throw FenceChangeError.unknownDevice(device) }
            return fences
        case .shared(let owner):
            if owner != SharedFences.everyDevice, book.groups[owner] == nil {
                throw FenceChangeError.unknownGroup(owner, existing: Array(book.groups.keys))
            }
            return book.shared[owner]?.fences ?? []
        }
    }

    /// `device "alice/phone"`, `the shared set`, `the shared set of group "family"`.
    var description: String {
        switch self {
        case .device(let device): "device \"\(device)\""
        case .shared(let owner): SharedFenceChange.subject(of: owner)
        }
    }
}
