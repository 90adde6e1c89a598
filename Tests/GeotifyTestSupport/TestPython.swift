import Foundation

/// The tests' Python: `.build/python/bin/python3` of this checkout, the virtual
/// environment `scripts/install-dependencies` fills from Tests/requirements.txt.
package var testPython: String {
    packageRoot.appendingPathComponent(".build/python/bin/python3").path
}

/// A script of the test support (Tests/GeotifyTestSupport/Scripts/`name`).
package func testSupportScript(_ name: String) -> String {
    packageRoot.appendingPathComponent("Tests/GeotifyTestSupport/Scripts/\(name)").path
}

/// The checkout's root, two levels above this file.
private var packageRoot: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
