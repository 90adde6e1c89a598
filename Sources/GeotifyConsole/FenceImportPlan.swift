import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Fences to import, by owner, in the fence file's JSON form: what a GeoJSON upload
/// becomes before anything is changed.
///
/// Appending adds the fences to each owner's list; replacing replaces the lists of the
/// owners named (and only those), which is how an export is imported back unchanged.
/// Every fence is decoded and checked as the fence file is (the 20-fence limit, unique
/// identifiers, shared identifiers not clashing with devices' own), all or none, and a
/// plan that would take the file past `maximumFenceFileBytes` is refused as `fence_limit`,
/// as a fence command is (in a fence directory when it is written, counting the files
/// as a command counts them).
package struct FenceImportPlan: Sendable, Equatable {
    /// Own fences by device.
    package var devices: [String: [JSON]]
    /// Shared fences by owner: `shared` (every device) or a group's name.
    package var shared: [String: [JSON]]
    /// Replace the owners' lists instead of appending to them.
    package var replace: Bool

    package init(devices: [String: [JSON]] = [:], shared: [String: [JSON]] = [:], replace: Bool) {
        self.devices = devices
        self.shared = shared
        self.replace = replace
    }

    /// What an import changed, for the reply.
    package struct Outcome: Sendable, Equatable {
        /// How many fences were imported.
        package var fences: Int
        /// Clamped radii and the like, as people should see them.
        package var warnings: [String]

        package init(fences: Int, warnings: [String]) {
            self.fences = fences
            self.warnings = warnings
        }
    }

    /// How many fences the plan holds.
    package var count: Int {
        devices.values.map(\.count).reduce(0, +) + shared.values.map(\.count).reduce(0, +)
    }

    /// `book` with the plan applied, validated as `file` validates what it loads, and the
    /// warnings; refused with the first problem's code and every problem's message.
    package func apply(to book: FenceBook, file: FenceFile) throws(FenceChangeError) -> (book: FenceBook, warnings: [String]) {
        var booksMade = 0
        return try apply(to: book, file: file, booksMade: &booksMade)
    }

    /// How many fence books `apply(to:file:)` makes on the way: a book costs every device
    /// in it, so this is the work an upload naming many devices can cause, which the tests
    /// bound.
    package func booksMade(applyingTo book: FenceBook, file: FenceFile) throws(FenceChangeError) -> Int {
        var booksMade = 0
        _ = try apply(to: book, file: file, booksMade: &booksMade)
        return booksMade
    }

    /// `apply(to:file:)`, counting the books it makes in `booksMade`.
    ///
    /// Each device's change is applied to its own list and the book is made once from
    /// all of them: a change names one device, so none sees another's. (Made again after
    /// each device, the whole book was rebuilt per device: an upload of 4 000 one-fence
    /// devices, half a megabyte, took 15 s.)
    private func apply(to book: FenceBook, file: FenceFile, booksMade: inout Int) throws(FenceChangeError) -> (book: FenceBook, warnings: [String]) {
        var book = book
        var warnings: [String] = []
        if !devices.isEmpty {
            var lists = book.devices
            for device in devices.keys.sorted() {
                let fences = devices[device] ?? []
                let change: FenceChange = replace ? .replaceAll(device: device, fences: fences) : .append(device: device, fences: fences)
                let outcome = try change.apply(toFencesOf: lists[device], in: book, limits: file.limits)
                lists[device] = outcome.fences
                warnings += outcome.warnings.map(\.description)
            }
            book = book.with(devices: lists)
            booksMade += 1
        }
        if !shared.isEmpty {
            var sets = book.shared
            for owner in shared.keys.sorted() {
                var decoded: [Fence] = []
                var problems: [String] = []
                for json in shared[owner] ?? [] {
                    let result = FenceCodec.decode(json, limits: file.limits)
                    warnings += result.warnings.map { "shared fence \"\(result.identifier ?? "?")\": \($0)" }
                    if let fence = result.fence { decoded.append(fence) } else {
                        problems += result.errors.map { "shared fence \"\(result.identifier ?? "?")\" of \(owner): \($0)" }
                    }
                }
                guard problems.isEmpty else {
                    throw FenceChangeError(.invalidValue, problems.joined(separator: "; "))
                }
                let kept = replace ? [] : (sets[owner]?.fences ?? [])
                sets[owner] = SharedFences(owner: owner, fences: kept + decoded)
            }
            book = FenceBook(devices: book.devices, groups: book.groups, shared: sets, revision: book.revision)
            booksMade += 1
        }
        let contents = file.contents(of: book)
        // A single file is written as `contents`. A fence directory's size is counted by
        // its write (`FenceFile.replace`), as a fence command's is: the files as they are
        // on disk, the import's replaced; `contents` renders every file as the bridge
        // writes it, larger than a file written by hand on one line.
        if file.layout == .file, contents.count > file.maximumBytes {
            throw FenceChangeError(.fenceLimit, "the import would make the fence file \(contents.count) bytes; at most \(file.maximumBytes) are accepted (maximumFenceFileBytes), so nothing was written")
        }
        let loaded = file.unbounded.parse(contents)
        booksMade += 1
        guard let checked = loaded.book else {
            throw FenceChangeError.invalid(.invalidValue, "the import does not fit the fence file: ", loaded.errors)
        }
        return (checked, warnings)
    }

    /// Why this instance may not import the plan into `file` when it is one of several
    /// that share the devices (`file.shard`), as the fence commands of an instance are
    /// refused; nil when it may. Decided for the whole plan (an import is all or none)
    /// before anything is read:
    /// - a single fence file is read-only to every instance (`read_only`);
    /// - so are a fence directory's groups and shared fences (`shared.json`): an instance
    ///   reads only its own devices' files, so it cannot check a shared fence against the
    ///   other instances' devices' own fences, where one of the same identifier would
    ///   keep the directory from loading there (people and `geotify fences`, which reads
    ///   every file, write them);
    /// - a device of another instance is that instance's to write (`other_shard`, naming
    ///   the first such device and the instance that owns it), as its commands are.
    package func refusal(writing file: FenceFile) -> FenceChangeError? {
        guard let shard = file.shard else { return nil }
        guard file.layout == .directory else {
            let readOnly = FenceChangeError.readOnly(file.path, instances: shard.count)
            return FenceChangeError(.readOnly, "\(readOnly.message); nothing was imported")
        }
        if !shared.isEmpty {
            return FenceChangeError(
                .readOnly,
                "the groups and shared fences of the fence directory \(file.path) are read-only to each of the \(shard.count) instances that share the devices (an instance reads only its own devices' files, so it cannot check shared fences against the others'); change them by hand or with geotify fences (docs/scaling.md); nothing was imported")
        }
        let foreign = devices.keys.filter { !shard.owns($0) }.sorted()
        guard let first = foreign.first else { return nil }
        let more = foreign.count > 1 ? ", and \(foreign.count - 1) more of the import's devices belong to other instances" : ""
        return FenceChangeError(.otherShard, "\(shard.otherInstance(owning: first))\(more): import \(more.isEmpty ? "its" : "their") fences there; nothing was imported")
    }

    /// Applies the plan to the fences as they are and writes them atomically; what a
    /// bridge's `importFences` does. The fence file's lock (in a fence directory the
    /// lock its writers take, on `devices/`) is held from the read to the write, as a
    /// fence command holds it, so no other writer's change comes between; only the
    /// files of the owners the plan names are written (`FenceFile.replace`). A file
    /// edited by hand meanwhile is refused as `stale` (try again); a write that fails (a
    /// full disk, no permission) as `io`, as a fence command's is.
    ///
    /// A missing, unreadable or invalid file is refused (`invalid_file`), as a fence
    /// command refuses it (`FenceFile.apply`): a fence file deleted or moved while the
    /// bridge runs is never replaced by one holding only the imported fences, which would
    /// take every other device's fences away. An instance of several refuses first what
    /// it may not write (`refusal(writing:)`).
    package func write(to file: FenceFile) throws(FenceChangeError) -> Outcome {
        if let refusal = refusal(writing: file) { throw refusal }
        var warnings: [String] = []
        let written: Result<[UInt8], FenceChangeError>
        do {
            written = try file.replace(devices: Array(devices.keys), shared: !shared.isEmpty) { reading throws(FenceChangeError) -> FenceBook in
                let applied = try apply(to: try Self.book(in: reading, of: file), file: file)
                warnings = applied.warnings
                return applied.book
            }
        } catch {
            throw FenceChangeError(error.code ?? .io, "\(error.description); nothing was imported\(error.code == .stale ? ", try again" : "")")
        }
        _ = try written.get()
        return Outcome(fences: count, warnings: warnings)
    }

    /// The fences `reading` found in `file`; refused (`invalid_file`) when it is
    /// missing, unreadable or invalid.
    private static func book(in reading: FenceFile.Reading, of file: FenceFile) throws(FenceChangeError) -> FenceBook {
        switch reading {
        case .missing:
            throw FenceChangeError(.invalidFile, "the fence file \(file.path) does not exist (deleted or moved?), so nothing can be imported into it; nothing was written: put it back")
        case .unreadable(let reason):
            throw FenceChangeError(.invalidFile, "the fence file \(file.path) cannot be read (\(reason)), so nothing can be imported into it; nothing was written")
        case .contents(let bytes, _):
            let loaded = file.parse(bytes)
            guard let book = loaded.book else { throw FenceChangeError.invalidFile(file.path, loaded.errors) }
            return book
        }
    }
}
