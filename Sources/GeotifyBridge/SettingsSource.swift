import Foundation
import GeotifyStore

/// Where a setting's value came from: a settings file, whose relative paths are
/// relative to its own directory, or a command-line flag, whose paths are relative to
/// the working directory. Errors name it, so a user knows what to fix.
struct SettingsSource: Sendable {
    enum Origin: Sendable {
        /// The settings file at this path.
        case file(String)
        /// The flag of this name, without the leading `--`.
        case flag(String)
    }

    let origin: Origin
    /// The process environment, for settings that may come from it (the shard's pod name).
    var environment: [String: String] = [:]

    /// The directory relative paths are resolved against; empty for the working directory.
    var base: String {
        guard case .file(let path) = origin else { return "" }
        return (path as NSString).deletingLastPathComponent
    }

    /// `path` as written here: relative paths in a settings file are relative to the
    /// file, so the example configuration works from any working directory.
    func resolve(_ path: String) -> String {
        if path.hasPrefix("/") || base.isEmpty { return path }
        return (base as NSString).appendingPathComponent(path)
    }

    /// The error for `issue`, a value refused by its type or range.
    func error(_ issue: FenceIssue) -> SettingsError {
        switch origin {
        case .file(let path): SettingsError("\(path): \(issue.message)")
        case .flag(let name): SettingsError("--\(name): \(issue.message)")
        }
    }

    /// The error for a value of `key` refused for `reason`.
    func error(key: String, _ reason: String) -> SettingsError {
        switch origin {
        case .file(let path): SettingsError("\(path): \"\(key)\": \(reason)")
        case .flag(let name): SettingsError("--\(name): \(reason)")
        }
    }
}
