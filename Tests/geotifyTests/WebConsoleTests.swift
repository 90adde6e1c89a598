import Foundation
import GeotifyTestSupport
import Testing

/// The web console of a real `geotify run` over a real mosquitto, in Debian's chromium
/// driven by Playwright, and its `/metrics` read by Prometheus' own parser: the same
/// scripts as the console's fixture tests (Tests/GeotifyConsoleTests/Python), with the
/// bridge as the backend. The browser test's screenshots are those in docs/images.
@Suite("Web console of the real bridge", .serialized, .waiting)
struct WebConsoleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let scripts = root.appendingPathComponent("Tests/GeotifyConsoleTests/Python")
    static let python = root.appendingPathComponent(".build/python/bin/python3").path

    static func run(_ script: String, _ arguments: [String]) throws -> String {
        try runCommand(python, [scripts.appendingPathComponent(script).path] + arguments)
    }

    @Test(.longWaiting) func theMapPageWorksAgainstTheBridgeInARealBrowser() throws {
        let screenshots = Self.root.appendingPathComponent(".build/bridge-screenshots")
        try? FileManager.default.removeItem(at: screenshots)
        let output = try Self.run("browser_test.py", ["bridge", geotifyExecutable.path, screenshots.path])
        #expect(output.contains("browser scenario passed"))
        for name in ["console-desktop.png", "console-phone.png", "console-peek.png"] {
            #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent(name).path), "\(name)")
        }
    }

    @Test func metricsOfTheBridgeParseWithPrometheusOwnParser() throws {
        #expect(try Self.run("check_metrics.py", ["bridge", geotifyExecutable.path]).contains("families"))
    }
}
