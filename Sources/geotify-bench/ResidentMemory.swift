import Foundation

/// The process's resident set size, read from /proc/self/statm, for measuring what a
/// structure costs in memory actually touched (not just what was reserved).
///
/// The heap keeps memory that was freed for reuse, so a measurement taken after large
/// structures were freed can undercount: measure on a fresh heap (the memory scenario
/// runs first) and build what is measured after the "before" reading.
enum ResidentMemory {
    /// Resident bytes now.
    static func bytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }
}
