import Foundation

/// Progress lines on standard error, so a long run shows what it is doing while the
/// table (or JSON) on standard output stays clean.
enum Progress {
    static func note(_ message: String) {
        FileHandle.standardError.write(Data("geotify-bench: \(message)\n".utf8))
    }
}
