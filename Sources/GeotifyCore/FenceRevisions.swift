/// The revisions fences get as a book is made from them: an identifier its scope (a
/// device, or a shared set's `FenceBook.scope(ofShared:)`) already had keeps the
/// revision it was added in; a new one gets the next revision.
///
/// `FenceBook.revised` applies it to a whole book, and the fence file applies it while it
/// decodes, scope by scope, so the fences of a large file are made once with their
/// revisions instead of being decoded, then copied with them (which held every fence
/// twice at start).
public struct FenceRevisions: Sendable {
    /// Scope → identifier → revision, as persisted (`FenceBook.knownRevisions`).
    public let known: [String: [String: Int]]
    /// The revision of the book these fences replace; new identifiers get the one after.
    public let current: Int
    /// Whether any fence revised so far was new to its scope.
    public private(set) var anyNew = false

    public init(known: [String: [String: Int]], current: Int) {
        self.known = known
        self.current = current
    }

    /// The revisions of `book`, for the book that replaces it.
    public init(of book: FenceBook) {
        self.init(known: book.knownRevisions, current: book.revision)
    }

    /// No fence known, every fence at revision 0: what a book read on its own has (the
    /// `geotify fences` commands, `check`), with no history to carry on.
    public static let unknown = FenceRevisions(known: [:], current: -1)

    /// The revision of the book made of the fences revised so far.
    public var revision: Int { anyNew ? current + 1 : current }

    /// `fences` of `scope` with their revisions: known identifiers keep theirs, new ones
    /// get `current + 1`. A fence that has its revision already is passed on as it is.
    public mutating func revise(_ fences: [Fence], scope: String) -> [Fence] {
        let scopeKnown = known[scope] ?? [:]
        let next = current + 1
        return fences.map { fence in
            if let revision = scopeKnown[fence.identifier] { return fence.with(addedRevision: revision) }
            anyNew = true
            return fence.with(addedRevision: next)
        }
    }
}
