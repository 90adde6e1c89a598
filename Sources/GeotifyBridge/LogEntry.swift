/// A line the lane core wants logged: decided in the core, written by the shell.
package struct LogEntry: Sendable, Equatable {
    package var level: Logger.Level
    package var message: String

    package init(level: Logger.Level, message: String) {
        self.level = level
        self.message = message
    }
}
