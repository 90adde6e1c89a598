import Foundation
import GeotifyTestSupport
import Testing

/// The checks that need tools from outside Swift, run with the tests' Python
/// (`.build/python`, from Tests/requirements.txt): Prometheus' own parser on `/metrics`,
/// and the map page in Debian's chromium driven by Playwright. Both start the console
/// fixture themselves (Python/console_backends.py). The same scripts run against the real
/// bridge in `geotifyTests.WebConsoleTests`.
@Suite(.serialized, .waiting) struct BrowserTests {
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let root = here.deletingLastPathComponent().deletingLastPathComponent()
    static let python = root.appendingPathComponent(".build/python/bin/python3").path
    static let fixture = productsDirectory.appendingPathComponent("geotify-console-fixture").path

    /// Runs a script in Python/ with `arguments` (Python finds the scripts' shared
    /// module beside them); throws with its output when it fails.
    static func run(_ script: String, _ arguments: [String]) throws -> String {
        try runCommand(python, [here.appendingPathComponent("Python/\(script)").path] + arguments)
    }

    @Test func metricsParseWithPrometheusOwnParser() throws {
        let output = try Self.run("check_metrics.py", ["fixture", Self.fixture])
        #expect(output.contains("families"))
    }

    @Test(.longWaiting) func theMapPageWorksInARealBrowser() throws {
        let screenshots = Self.root.appendingPathComponent(".build/console-screenshots")
        try? FileManager.default.removeItem(at: screenshots)
        let output = try Self.run("browser_test.py", ["fixture", Self.fixture, screenshots.path])
        #expect(output.contains("browser scenario passed"))
        for name in ["console-desktop.png", "console-phone.png", "console-peek.png"] {
            #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent(name).path), "\(name)")
        }
    }
}
