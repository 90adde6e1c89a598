import Foundation
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// `geotify fences`: the app's list screen, Add/Edit form and Delete, and import and
/// export, on the fence file. Every change is a `FenceChange` written through
/// `FenceFile.apply(_:expecting:)`, so it is validated, limited and written exactly as
/// MQTT commands are, with the limits of the settings the bridge runs with; a change to
/// a shared set (`--shared`, `--group NAME`) is a `SharedFenceChange`, validated as
/// loading the file validates shared fences.
enum FencesCommand {
    /// The subcommands, with the synopsis and summary the help shows.
    enum Subcommand: String, CaseIterable {
        case list, show, add, edit, rm, `import`, export

        /// The subcommand's words and options, as help and usage errors show them.
        var synopsis: String {
            switch self {
            case .list: "list [--device DEVICE | --shared | --group NAME] [--json]"
            case .show: "show DEVICE ID [--json]"
            case .add: "add DEVICE --id ID --lat DEG --lon DEG --radius M --event TYPE [--note TEXT]"
            case .edit: "edit DEVICE ID [--id NEW] [--lat DEG] [--lon DEG] [--radius M] [--event TYPE] [--note TEXT]"
            case .rm: "rm DEVICE ID"
            case .import: "import DEVICE FILE [--replace]"
            case .export: "export [DEVICE] [--owntracks]"
            }
        }

        /// What the subcommand does, for the help.
        var summary: String {
            switch self {
            case .list:
                """
                every fence, one device's (with the shared fences that apply to it) or
                      one shared set's, as tables: devices' fences sorted by device, then
                      as in the file; shared fences; groups
                """
            case .show: "one fence, every field"
            case .add: "add a fence at the end of the device's list (a new device is created)"
            case .edit: "change the fields given; --id renames the fence"
            case .rm: "remove a fence"
            case .import:
                """
                add the fences in FILE: the iOS app's saved geotifications, or OwnTracks
                      waypoints (an export, a configuration with waypoints, or an array of
                      waypoints); identifiers the device already has are refused; --replace
                      replaces the device's whole list instead
                """
            case .export:
                """
                print the device's fences as the app's geotifications array, which import
                      reads back; --owntracks: as an OwnTracks waypoints document, which the
                      apps import as regions; without DEVICE (or --shared, --group): the whole
                      fence file, as list --json prints it
                """
            }
        }

        /// The options the subcommand takes besides the settings options.
        var options: [CommandOption] {
            switch self {
            case .list: [FencesCommand.device, FenceOwner.shared, FenceOwner.group, FencesCommand.json]
            case .show: [FenceOwner.shared, FenceOwner.group, FencesCommand.json]
            case .add, .edit: FencesCommand.fieldOptions + [FenceOwner.shared, FenceOwner.group]
            case .rm: [FenceOwner.shared, FenceOwner.group]
            case .import: [FencesCommand.replace, FenceOwner.shared, FenceOwner.group]
            case .export: [FenceOwner.shared, FenceOwner.group, FencesCommand.ownTracks]
            }
        }
    }

    /// The settings flags every subcommand takes.
    static let settingsOptions = SettingsOptions.options(["fences"])

    /// The options that set a fence's fields, for `add` and `edit`.
    static let fieldOptions = [
        CommandOption(name: "id", placeholder: "ID", help: "the fence's identifier (edit: its new one)"),
        CommandOption(name: "lat", placeholder: "DEG", help: "the latitude of the centre, -90...90"),
        CommandOption(name: "lon", placeholder: "DEG", help: "the longitude of the centre, -180...180"),
        CommandOption(name: "radius", placeholder: "M", help: "the radius in metres"),
        CommandOption(name: "event", placeholder: "TYPE", help: "which transitions notify (see TYPE below)"),
        CommandOption(name: "note", placeholder: "TEXT", help: "the notification's text"),
    ]
    static let device = CommandOption(name: "device", placeholder: "DEVICE", help: "list: only this device's fences and the shared fences that apply to it")
    static let json = CommandOption(name: "json", placeholder: nil, help: "list, show: print JSON (shapes below)")
    static let replace = CommandOption(name: "replace", placeholder: nil, help: "import: replace the device's whole list")
    static let ownTracks = CommandOption(
        name: "owntracks", placeholder: nil, help: "export: an OwnTracks waypoints document (circles only) instead of the app's array")

    /// The text of `geotify fences --help`.
    static let help = """
        usage: geotify fences <subcommand> [options]

        Lists and changes the fences in the fence file, validated as the bridge validates
        the file. A change is written atomically (pretty-printed, keys sorted) and refused
        when someone else changed the file meanwhile; a missing file is created.

        subcommands:
        \(Subcommand.allCases.map { "  \($0.synopsis)\n      \($0.summary)" }.joined(separator: "\n"))

        fence fields (add, edit):
        \(CommandOption.help(fieldOptions))

        shared fences (every subcommand but list takes them in place of DEVICE):
        \(CommandOption.help([FenceOwner.shared, FenceOwner.group]))

        other options:
        \(CommandOption.help([device, json, replace, ownTracks]))

        TYPE is \(EventType.canonicalNames.joined(separator: ", ")), or the app's "On Entry" / "On Exit";
        several combine, comma-separated: onEntry,onDwell. A radius outside the limits is
        clamped, with a warning on standard error. --lat, --lon or --radius turn a polygon
        fence into a circle (give all three).

        The fence file's "shared" and its group names are not devices: add and import
        refuse to create a device named "shared" or as a group (reserved_device). A group
        is defined in the file's "groups" before --group can use it (unknown_group).

        --json output (pretty-printed, keys sorted; export always prints JSON):
          list   the fence file's form: {"devices": {"alice/phone": [{"eventType": "onEntry",
                 "identifier": "home", "latitude": 52.52, ...}]}, "groups": {...},
                 "shared": [...]}; the whole file, which loads as a fence file as it is;
                 --device: the device's fences, the shared fences that apply to it and
                 its groups; --shared, --group: that set (and the group)
          show   the fence alone: {"eventType": "onEntry", "identifier": "home", ...}

        Exits 0 on success; 1 when the file is not valid or a change is refused, leaving
        the file as it was; 2 on a usage error.

        settings options (every subcommand):
        \(CommandOption.help(settingsOptions))
        """

    /// Runs `geotify fences <subcommand> ...` and returns the exit status.
    static func run(_ words: [String]) throws(UsageError) -> Int32 {
        let names = Subcommand.allCases.map(\.rawValue).joined(separator: ", ")
        guard let word = words.first, !word.hasPrefix("-") else {
            throw UsageError("missing subcommand, one of \(names) (before any options)", command: "fences")
        }
        guard let subcommand = Subcommand(rawValue: word) else {
            let hint = NameSuggestion.nearest(to: word, in: Subcommand.allCases.map(\.rawValue)).map { "did you mean \"\($0)\"? " } ?? ""
            throw UsageError("unknown subcommand \"\(word)\" (\(hint)one of \(names))", command: "fences")
        }
        let rest = Array(words.dropFirst())
        switch subcommand {
        case .list: return try list(rest)
        case .show: return try show(rest)
        case .add: return try add(rest)
        case .edit: return try edit(rest)
        case .rm: return try remove(rest)
        case .import: return try importFences(rest)
        case .export: return try export(rest)
        }
    }

    // MARK: Reading

    /// `list`: the fences as tables, or as the fence file's JSON.
    private static func list(_ words: [String]) throws(UsageError) -> Int32 {
        let (arguments, set, _, file, chosen) = try parse(words, .list, positionals: [])
        let device = arguments.value("device")
        if device != nil, set != nil {
            throw UsageError("--device and --\(set == .shared(SharedFences.everyDevice) ? "shared" : "group") exclude each other", command: "fences")
        }
        guard let book = load(file, chosen) else { return 1 }
        let shown: FenceBook
        do throws(FenceChangeError) {
            shown = try part(of: book, device: device, set: set)
        } catch {
            return refuse(error)
        }
        if arguments.isSet("json") {
            print(String(decoding: FenceFile.contents(of: shown), as: UTF8.self), terminator: "")
            return 0
        }
        var tables: [String] = []
        if shown.devices.values.contains(where: { !$0.isEmpty }) { tables.append(FenceTable(book: shown).text) }
        if !shown.shared.isEmpty { tables.append(FenceTable(shared: Array(shown.shared.values)).text) }
        if device == nil, !shown.groups.isEmpty { tables.append(FenceTable.groups(of: shown)) }
        if tables.isEmpty {
            print(device.map { "device \"\($0)\" has no fences" } ?? set.map { "\($0) has no fences" } ?? "no fences in \(file.path)")
        } else {
            print(tables.joined(separator: "\n"), terminator: "")
        }
        return 0
    }

    /// The part of `book` that `list` shows: everything; a device's own fences with the
    /// shared sets that apply to it and its groups; or one shared set (with its group).
    /// Each is a book the fence file can hold as it is.
    static func part(of book: FenceBook, device: String?, set: FenceOwner?) throws(FenceChangeError) -> FenceBook {
        if let device {
            guard book.knows(device) else { throw FenceChangeError.unknownDevice(device) }
            let groups = book.groups.filter { $0.value.contains(device) }
            let shared = book.shared.filter { $0.key == SharedFences.everyDevice || groups[$0.key] != nil }
            return FenceBook(devices: [device: book.fences(of: device)], groups: groups, shared: shared)
        }
        guard case .shared(let owner) = set else { return book }
        let fences = try FenceOwner.shared(owner).fences(in: book)
        return FenceBook(
            groups: book.groups.filter { $0.key == owner },
            shared: fences.isEmpty ? [:] : [owner: SharedFences(owner: owner, fences: fences)])
    }

    /// `show`: one fence's fields, or the fence's JSON.
    private static func show(_ words: [String]) throws(UsageError) -> Int32 {
        let (arguments, owner, names, file, chosen) = try parseOwned(words, .show, positionals: ["ID"])
        guard let book = load(file, chosen) else { return 1 }
        let fence: Fence
        do throws(FenceChangeError) {
            let fences = try owner.fences(in: book)
            guard let found = fences.first(where: { $0.identifier == names[0] }) else {
                throw FenceChangeError.unknownFence(names[0], in: owner.description, existing: fences)
            }
            fence = found
        } catch {
            return refuse(error)
        }
        let json = FenceCodec.encode(fence)
        if arguments.isSet("json") {
            print(JSONWriter(pretty: true, sortedKeys: true).string(json), terminator: "")
            return 0
        }
        let heading = switch owner {
        case .device(let device): ("device", device)
        case .shared(let set): ("shared with", set == SharedFences.everyDevice ? "every device" : "group \(set)")
        }
        let fields = [heading] + (json.objectValue?.members ?? []).map { ($0.key, text(of: $0.value)) }
        let width = fields.map(\.0.count).max() ?? 0
        for (key, value) in fields {
            print("\(key):\(String(repeating: " ", count: width - key.count + 2))\(value)")
        }
        return 0
    }

    /// `export`: a device's fences (or a shared set's) as the app's geotifications array
    /// or as OwnTracks waypoints; without one, the whole file.
    private static func export(_ words: [String]) throws(UsageError) -> Int32 {
        let (arguments, owner, _, file, chosen) = try parse(words, .export, positionals: ["[DEVICE]"])
        let ownTracks = arguments.isSet("owntracks")
        if owner == nil, ownTracks {
            throw UsageError("--owntracks exports one list: give DEVICE, --shared or --group NAME", command: "fences")
        }
        guard let book = load(file, chosen) else { return 1 }
        guard let owner else {
            print(String(decoding: FenceFile.contents(of: book), as: UTF8.self), terminator: "")
            return 0
        }
        let fences: [Fence]
        do throws(FenceChangeError) {
            fences = try owner.fences(in: book)
        } catch {
            return refuse(error)
        }
        let writer = JSONWriter(pretty: true, sortedKeys: true)
        guard ownTracks else {
            print(writer.string(FenceExport.appGeotifications(fences)), terminator: "")
            return 0
        }
        let (document, skipped) = FenceExport.ownTracksWaypoints(fences)
        for identifier in skipped {
            Logger.standardError("warning: fence \"\(identifier)\" of \(owner) is a polygon; OwnTracks regions are circles, so it is left out")
        }
        print(writer.string(document), terminator: "")
        return 0
    }

    // MARK: Changing

    /// `add`: a new fence from the options.
    private static func add(_ words: [String]) throws(UsageError) -> Int32 {
        let (arguments, owner, _, file, _) = try parseOwned(words, .add, positionals: [])
        let missing = ["id", "lat", "lon", "radius", "event"].filter { arguments.value($0) == nil }
        guard missing.isEmpty else {
            throw UsageError("fences add needs \(missing.map { "--\($0)" }.joined(separator: ", "))", command: "fences")
        }
        let fence = JSON.object(try fields(arguments))
        do {
            let applied = try apply(owner, .add(device: name(of: owner), fence: fence), to: file)
            print("added fence \"\(applied.fence?.identifier ?? "")\" to \(owner)")
            return 0
        } catch {
            return refuse(error)
        }
    }

    /// `edit`: the given fields of one fence, printing what changed.
    private static func edit(_ words: [String]) throws(UsageError) -> Int32 {
        let (arguments, owner, names, file, _) = try parseOwned(words, .edit, positionals: ["ID"])
        var fields = try fields(arguments)
        guard !fields.members.isEmpty else {
            throw UsageError("nothing to change: give at least one of \(fieldOptions.map(\.name).sorted().map { "--\($0)" }.joined(separator: ", "))", command: "fences")
        }
        // A circle's fields replace a polygon: the merge patch's null removes it.
        if ["latitude", "longitude", "radius"].contains(where: { fields[$0] != nil }) { fields["polygon"] = .null }
        do {
            let applied = try apply(owner, .edit(device: name(of: owner), identifier: names[0], fields: fields), to: file)
            let before = applied.previous.map(FenceCodec.encode)?.objectValue ?? JSONObject()
            let after = applied.fence.map(FenceCodec.encode)?.objectValue ?? JSONObject()
            let keys = before.keys + after.keys.filter { !before.keys.contains($0) }
            let changes = keys.filter { before[$0] != after[$0] }.map { key in
                "\(key) \(before[key].map(JSONWriter().string) ?? "(none)") → \(after[key].map(JSONWriter().string) ?? "(none)")"
            }
            let subject = "fence \"\(applied.fence?.identifier ?? names[0])\" of \(owner)"
            print(changes.isEmpty ? "\(subject) is unchanged" : "changed \(subject): \(changes.joined(separator: ", "))")
            return 0
        } catch {
            return refuse(error)
        }
    }

    /// `rm`: removes one fence.
    private static func remove(_ words: [String]) throws(UsageError) -> Int32 {
        let (_, owner, names, file, _) = try parseOwned(words, .rm, positionals: ["ID"])
        do {
            _ = try apply(owner, .delete(device: name(of: owner), identifier: names[0]), to: file)
            print("removed fence \"\(names[0])\" from \(owner)")
            return 0
        } catch {
            return refuse(error)
        }
    }

    /// `import`: the fences of a file, appended or replacing the list.
    private static func importFences(_ words: [String]) throws(UsageError) -> Int32 {
        let (arguments, owner, names, file, _) = try parseOwned(words, .import, positionals: ["FILE"])
        let path = names[0]
        let replace = arguments.isSet("replace")
        do throws(FenceChangeError) {
            let imported = try FenceImport(contentsOf: path, maximumBytes: file.maximumBytes)
            for warning in imported.warnings { Logger.standardError("warning: \(warning)") }
            let change: FenceChange = replace
                ? .replaceAll(device: name(of: owner), fences: imported.fences)
                : .append(device: name(of: owner), fences: imported.fences)
            let applied = try apply(owner, change, to: file)
            let count = "\(Counted(imported.fences.count, "fence"))"
            let now: Int
            switch owner {
            case .device(let device): now = applied.book.fences(of: device).count
            case .shared(let set): now = applied.book.shared[set]?.fences.count ?? 0
            }
            let result = replace ? "replacing its list" : "which now has \(now)"
            print("imported \(count) (\(imported.format)) into \(owner), \(result)")
            return 0
        } catch {
            let status = refuse(error)
            if error.code == .duplicateIdentifier && !replace {
                let list = if case .device = owner { "the device's" } else { "the set's" }
                Logger.standardError("hint: --replace replaces \(list) whole list with the file's fences")
            }
            return status
        }
    }

    // MARK: Shared

    /// The fields the options in `arguments` set, in the fence file's JSON form; an
    /// `--event` list separated by commas becomes an array.
    private static func fields(_ arguments: Arguments) throws(UsageError) -> JSONObject {
        var fields = JSONObject()
        if let identifier = arguments.value("id") { fields["identifier"] = .string(identifier) }
        for (option, key) in [("lat", "latitude"), ("lon", "longitude"), ("radius", "radius")] {
            if let number = try arguments.number(option) { fields[key] = .number(number) }
        }
        if let note = arguments.value("note") { fields["note"] = .string(note) }
        if let event = arguments.value("event") {
            let names = event.split(separator: ",", omittingEmptySubsequences: false).map { JSON.string(String($0)) }
            fields["eventType"] = names.count == 1 ? names[0] : .array(names)
        }
        return fields
    }

    /// The arguments of `subcommand`, whose list (`FenceOwner.parse`), its other
    /// positional arguments (exactly `positionals`) and the fence file of the settings,
    /// with their limits.
    private static func parse(
        _ words: [String], _ subcommand: Subcommand, positionals: [String]
    ) throws(UsageError) -> (Arguments, FenceOwner?, [String], FenceFile, SettingsOptions) {
        let arguments = try Arguments(words, command: "fences", options: settingsOptions + subcommand.options)
        let (owner, names) = try FenceOwner.parse(arguments, positionals: positionals, usage: subcommand.synopsis)
        let chosen = try SettingsOptions.settings(arguments, flags: ["fences"], command: "fences")
        let settings = chosen.settings
        return (arguments, owner, names, FenceFile(path: settings.fencesPath, limits: settings.limits, maximumBytes: settings.maximumFenceFileBytes), chosen)
    }

    /// `parse` for a subcommand on one list, `DEVICE` (or `--shared`, `--group NAME`)
    /// followed by `positionals`.
    private static func parseOwned(
        _ words: [String], _ subcommand: Subcommand, positionals: [String]
    ) throws(UsageError) -> (Arguments, FenceOwner, [String], FenceFile, SettingsOptions) {
        let (arguments, owner, names, file, chosen) = try parse(words, subcommand, positionals: ["DEVICE"] + positionals)
        guard let owner else { throw UsageError("missing DEVICE; usage: geotify fences \(subcommand.synopsis)", command: "fences") }
        return (arguments, owner, names, file, chosen)
    }

    /// The fence file's book, printing its warnings; nil, after printing every error,
    /// when it is missing or not valid.
    private static func load(_ file: FenceFile, _ chosen: SettingsOptions) -> FenceBook? {
        let loaded = file.load()
        for warning in loaded.warnings { Logger.standardError("warning: \(warning)") }
        for error in loaded.errors { Logger.standardError("error: \(error)") }
        if loaded.book == nil, !FileManager.default.fileExists(atPath: file.path), let hint = chosen.hint(missing: "fences") {
            Logger.standardError(hint)
        }
        return loaded.book
    }

    /// The name a change to `owner`'s list carries in place of a device.
    private static func name(of owner: FenceOwner) -> String {
        switch owner {
        case .device(let name), .shared(let name): name
        }
    }

    /// Applies `change` to `owner`'s list in whatever the file holds now (creating a
    /// missing file: the operator asked for this change) and prints the warnings.
    private static func apply(_ owner: FenceOwner, _ change: FenceChange, to file: FenceFile) throws(FenceChangeError) -> FenceChange.Applied {
        let applied = switch owner {
        case .device: try file.apply(change, expecting: nil, creatingMissingFile: true).applied
        case .shared(let set): try file.apply(SharedFenceChange(owner: set, change), creatingMissingFile: true).applied
        }
        for warning in applied.warnings { Logger.standardError("warning: \(warning)") }
        return applied
    }

    /// Prints why a change or a lookup was refused, each problem on its own line (and,
    /// for a device named as a shared set, how to reach the set); returns the exit
    /// status 1.
    private static func refuse(_ error: FenceChangeError) -> Int32 {
        if error.problems.isEmpty {
            Logger.standardError("error: \(error.message)")
        } else {
            for problem in error.problems { Logger.standardError("error: \(problem)") }
        }
        if error.code == .reservedDevice {
            Logger.standardError("hint: --shared changes the fences shared with every device, --group NAME those of a group")
        }
        return 1
    }

    /// A field's value as `show` prints it: text as it is, anything else as JSON.
    private static func text(of value: JSON) -> String {
        if case .string(let text) = value { return FenceTable.visible(text) }
        return JSONWriter().string(value)
    }
}
