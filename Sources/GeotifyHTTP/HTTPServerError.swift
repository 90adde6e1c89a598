/// Why the HTTP server could not start (the address is taken, not local, ...).
package struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
