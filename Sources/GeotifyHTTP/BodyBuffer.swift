/// A request's body as it arrives, capped at the size limit: the second line of defence
/// behind `RequestLimits`, so that no way of framing a body (whatever libmicrohttpd
/// makes of the header) lets more than `maximum` bytes be stored.
package struct BodyBuffer: Sendable, Equatable {
    /// The most bytes kept.
    package let maximum: Int
    /// The bytes received, while within `maximum`.
    package private(set) var bytes: [UInt8] = []
    /// Whether more than `maximum` bytes arrived (what came is then dropped).
    package private(set) var overflowed = false

    package init(maximum: Int) {
        self.maximum = maximum
    }

    /// Adds `more`; false (keeping nothing more) once the body is past `maximum`.
    package mutating func append(_ more: some Collection<UInt8>) -> Bool {
        guard !overflowed else { return false }
        guard more.count <= maximum - bytes.count else {
            overflowed = true
            bytes = []
            return false
        }
        bytes.append(contentsOf: more)
        return true
    }
}
