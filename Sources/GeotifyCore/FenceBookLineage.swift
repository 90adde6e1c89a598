/// What a `FenceBook` made by `replacing(devices:)` knows of the books it was made from:
/// for each of its nearest forebears (at most `depth` of them), the devices whose fences
/// may differ between that book and this one. Every other making of a book (the
/// initialiser, `revised`: the file read again) starts with none.
///
/// Why: a lane that holds many devices looks at each device whose fences changed when
/// another book comes into force (fences removed, admission places, timer deadlines).
/// A command or a console edit changes one device's fences; looking at every device of
/// the lane for it held a lane of 100 000 devices for about 120 ms, and every position
/// in it waited. With the lineage the lane looks only at the devices named here, and at
/// every device only when the book it last looked at is not a forebear within reach.
///
/// `replacing(devices:)` changes nothing of a device it is not given (its own fences, its
/// groups, the shared sets and the `DeviceFences` object it is evaluated against stay
/// the very same), so the devices given are all that may differ from the book it was
/// made from, and the union of the steps' devices all that may differ from an earlier
/// forebear.
package struct FenceBookLineage: Sendable {
    /// How many forebears are remembered.
    package static let depth = 8
    /// The most devices remembered for one forebear; past it, that forebear and the
    /// earlier ones are let go (a lane that last looked at them looks at every device).
    package static let maximumChanged = 4_096

    /// The nearest forebear first.
    private var forebears: [(edition: FenceBookEdition, changed: Set<String>)] = []

    package init() {}

    /// The devices whose fences may differ between the book of `edition` and the book
    /// this lineage belongs to, or nil when `edition` is not a forebear remembered.
    package func devicesChanged(since edition: FenceBookEdition) -> Set<String>? {
        forebears.first { $0.edition.isSame(as: edition) }?.changed
    }

    /// The lineage of a book made from the book of `edition`, whose lineage this is, by
    /// changing the fences of `changed`.
    package func extended(from edition: FenceBookEdition, changed: Set<String>) -> FenceBookLineage {
        var next = FenceBookLineage()
        guard changed.count <= Self.maximumChanged else { return next }
        next.forebears.append((edition, changed))
        for forebear in forebears.prefix(Self.depth - 1) {
            let union = forebear.changed.union(changed)
            guard union.count <= Self.maximumChanged else { break }
            next.forebears.append((forebear.edition, union))
        }
        return next
    }
}
