/// A command line that cannot be run as written: what is wrong, and which subcommand's
/// help to read.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    var command: String

    init(_ message: String, command: String) {
        self.message = message
        self.command = command
    }

    var description: String {
        command == "help" ? "\(message) (see 'geotify --help')" : "\(message) (see 'geotify \(command) --help')"
    }
}
