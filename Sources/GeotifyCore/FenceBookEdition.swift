/// Which making of a `FenceBook` a value is: every book `FenceBook`'s own code makes (its
/// initialiser, `replacing(devices:)`) is a new edition, and copies of a book share it.
///
/// Why: a lane keeps work derived from the book (its devices' timer deadlines) and must
/// notice when the book in force is another one. Comparing two books costs a walk over
/// every fence when they are equal but built apart (a reload of an unchanged file), which
/// for a large file would stall the lane; comparing editions costs one pointer. Two
/// editions may hold equal fences, so "another edition" means "perhaps changed", never
/// the reverse. It takes no part in the book's equality, which is about its fences.
package struct FenceBookEdition: Sendable, Equatable {
    /// The object whose identity is the edition.
    private final class Marker: Sendable {}

    private let marker = Marker()

    package init() {}

    /// Whether `other` is this edition (a copy of the same making).
    package func isSame(as other: FenceBookEdition) -> Bool {
        marker === other.marker
    }

    /// Always true: the edition is not part of what a book holds (`FenceBook`'s `==`).
    package static func == (lhs: FenceBookEdition, rhs: FenceBookEdition) -> Bool {
        true
    }
}
