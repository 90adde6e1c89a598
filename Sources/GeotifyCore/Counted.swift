/// A count with its noun in the right number, "1 device" and "2 devices", so that a
/// message that counts things reads right at one without a ternary at each place that
/// writes one.
package struct Counted: CustomStringConvertible, Sendable {
    package let count: Int
    package let singular: String
    package let plural: String

    /// `count` of `singular`; the plural is `singular` + "s" unless given.
    package init(_ count: Int, _ singular: String, plural: String? = nil) {
        self.count = count
        self.singular = singular
        self.plural = plural ?? singular + "s"
    }

    package var description: String { "\(count) \(count == 1 ? singular : plural)" }
}
