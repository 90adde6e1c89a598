import Foundation
import GeotifyStore

/// Whether fence commands will be able to write the fence file, checked when the bridge
/// starts: a change is written atomically (a temporary file beside the fence file,
/// renamed over it), so the file's directory must be writable (for a fence directory:
/// the directory of its device files). A container that mounts
/// the configuration read-only, or owned by another user, would otherwise answer every
/// `add`, `edit`, `delete` and `commit` with `io: Permission denied` and say nothing at
/// start.
package enum FenceFileAccess {
    /// The warning to log at start when commands are on and the fence file's directory
    /// is not writable by this process; nil when commands are off or it is writable.
    /// `isWritable` says whether a directory is writable (by default `access(2)`).
    package static func warning(
        settings: Settings, isWritable: (String) -> Bool = { access($0, W_OK | X_OK) == 0 }
    ) -> String? {
        guard settings.commandsEnabled else { return nil }
        let directory = FenceFile(path: settings.fencesPath).deviceFilesDirectory ?? directory(of: settings.fencesPath)
        guard !isWritable(directory) else { return nil }
        return "fence commands are on but the fence file's directory \(directory) is not writable by this user (uid \(getuid())): "
            + "every add, edit, delete and commit will be refused with io; make it writable, or set \"commands\": false"
    }

    /// The directory a write of `path` replaces a file in: that of the file a symbolic
    /// link points to, when `path` is one.
    static func directory(of path: String) -> String {
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map { link in
            link.hasPrefix("/") ? link : ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(link)
        } ?? path
        let directory = (target as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }
}
