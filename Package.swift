// swift-tools-version:6.0
import PackageDescription

// The geometry, the JSON parser and the store's fence-file decoding are optimised in
// debug builds too, and so are the core's tests (brute-force oracles over thousands of
// fences and points). Unoptimised, they spent 18 of the test run's 95 s of CPU, and the
// bridges the tests start took seconds for a 100 000-fence file. -O drops `assert` and
// `precondition`'s message (the check stays), so they use no `assert`: a check for debug
// builds only is `#if DEBUG` with `fatalError` (OwnFenceTable, JSONObjectWriter), and the
// tests check what they checked before; the modules with confinement assertions (the
// bridge, MQTT) stay unoptimised. See docs/testing.md.
let optimizedInDebugBuilds: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "Geotify",
    products: [
        .executable(name: "geotify", targets: ["geotify"]),
        // For the fuzz targets in Fuzz/, a package of their own that depends on this one.
        .library(name: "GeotifyLibrary", targets: ["GeotifyJSON", "GeotifyCore", "GeotifyStore", "GeotifyBridge"]),
    ],
    targets: [
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libcurl and libmicrohttpd are opened when first used, not linked (see their
        // shim.h): their headers are on the default include path.
        .systemLibrary(name: "CCurl"),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CSSL",
            pkgConfig: "libssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(name: "CMicroHTTPD"),
        .systemLibrary(
            name: "CCrypt",
            pkgConfig: "libcrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        // Buffered reads and writes of the MQTT socket underneath libmosquitto (see its
        // header). Its `SSL_read`, `SSL_write`, `SSL_shutdown` and `SSL_get_error` stand in
        // front of OpenSSL's for libmosquitto, which takes them from libssl (a library the
        // executable does not link itself), so the linker is told to export them, as it
        // exports `read` for the libraries it links.
        .target(
            name: "CBufferedSocket",
            linkerSettings: [
                .unsafeFlags([
                    "-Xlinker", "--export-dynamic-symbol=SSL_read", "-Xlinker", "--export-dynamic-symbol=SSL_write",
                    "-Xlinker", "--export-dynamic-symbol=SSL_shutdown", "-Xlinker", "--export-dynamic-symbol=SSL_get_error",
                ])
            ]
        ),
        .target(name: "GeotifyJSON", swiftSettings: optimizedInDebugBuilds),
        .target(name: "GeotifyTime"),
        // The prefetch hint the evaluator gives (Swift cannot emit the instruction).
        .target(name: "CPrefetch"),
        .target(name: "GeotifyCore", dependencies: ["CPrefetch"], swiftSettings: optimizedInDebugBuilds),
        .target(name: "GeotifyStore", dependencies: ["GeotifyCore", "GeotifyJSON", "CSQLite"], swiftSettings: optimizedInDebugBuilds),
        .target(name: "GeotifyMQTT", dependencies: ["CBufferedSocket", "CMosquitto", "GeotifyTime"]),
        .target(
            name: "GeotifyDelivery",
            dependencies: ["CCurl", "CCrypto", "GeotifyCore", "GeotifyJSON", "GeotifyStore", "GeotifyTime"]
        ),
        .target(name: "GeotifyHTTP", dependencies: ["CMicroHTTPD", "CCrypt", "GeotifyCore", "GeotifyJSON", "GeotifyTime"]),
        .target(
            name: "GeotifyConsole",
            dependencies: ["GeotifyHTTP", "GeotifyCore", "GeotifyJSON", "GeotifyStore", "GeotifyTime"],
            resources: [.embedInCode("Page/index.html"), .embedInCode("Page/console.js"), .embedInCode("Page/console.css")]
        ),
        .target(
            name: "GeotifyBridge",
            dependencies: [
                "CSodium", "GeotifyConsole", "GeotifyCore", "GeotifyDelivery", "GeotifyHTTP", "GeotifyJSON", "GeotifyStore", "GeotifyMQTT",
                "GeotifyTime",
            ]
        ),
        .executableTarget(name: "geotify", dependencies: ["GeotifyBridge", "GeotifyDelivery", "GeotifyHTTP", "GeotifyStore", "GeotifyTime"]),
        .executableTarget(
            name: "geotify-bench",
            // GeotifyTestSupport: the throwaway certificates of `sidebyside --tls`.
            dependencies: ["CMosquitto", "GeotifyBridge", "GeotifyCore", "GeotifyJSON", "GeotifyMQTT", "GeotifyStore", "GeotifyTestSupport"]
        ),

        .target(name: "GeotifyTestSupport", dependencies: ["GeotifyMQTT", "GeotifyTime"], path: "Tests/GeotifyTestSupport", exclude: ["Scripts"]),
        .target(
            name: "GeotifyConsoleFixture",
            dependencies: ["GeotifyConsole", "GeotifyCore", "GeotifyJSON", "GeotifyStore", "GeotifyTime"],
            path: "Tests/GeotifyConsoleFixture"
        ),
        .executableTarget(
            name: "geotify-console-fixture",
            dependencies: ["GeotifyConsole", "GeotifyConsoleFixture", "GeotifyHTTP", "GeotifyJSON", "GeotifyTime"],
            path: "Tests/ConsoleFixtureServer"
        ),
        .testTarget(name: "GeotifyJSONTests", dependencies: ["GeotifyJSON", "GeotifyTestSupport"]),
        .testTarget(name: "GeotifyTimeTests", dependencies: ["GeotifyTime"]),
        .testTarget(
            name: "GeotifyCoreTests", dependencies: ["GeotifyCore", "GeotifyTestSupport"], exclude: ["Reference"],
            swiftSettings: optimizedInDebugBuilds
        ),
        .testTarget(name: "GeotifyStoreTests", dependencies: ["GeotifyStore", "GeotifyTestSupport"]),
        .testTarget(
            name: "GeotifyDeliveryTests",
            dependencies: ["GeotifyDelivery", "GeotifyBridge", "GeotifyCore", "GeotifyJSON", "GeotifyStore", "GeotifyTime", "GeotifyTestSupport"]
        ),
        .testTarget(name: "GeotifyHTTPTests", dependencies: ["GeotifyCore", "GeotifyHTTP", "GeotifyJSON", "GeotifyTime", "GeotifyTestSupport"]),
        .testTarget(
            name: "GeotifyConsoleTests",
            dependencies: [
                "GeotifyConsole", "GeotifyConsoleFixture", "GeotifyCore", "GeotifyHTTP", "GeotifyJSON", "GeotifyStore",
                "GeotifyTime", "GeotifyTestSupport", "geotify-console-fixture",
            ],
            exclude: ["Python"]
        ),
        .testTarget(name: "GeotifyMQTTTests", dependencies: ["CBufferedSocket", "CSSL", "GeotifyMQTT", "GeotifyTestSupport", "GeotifyTime"]),
        .testTarget(
            name: "GeotifyBridgeTests",
            dependencies: ["GeotifyBridge", "GeotifyConsole", "GeotifyHTTP", "GeotifyJSON", "GeotifyMQTT", "GeotifyTestSupport", "GeotifyTime"]
        ),
        .testTarget(
            name: "geotifyTests",
            dependencies: ["geotify", "GeotifyBridge", "GeotifyDelivery", "GeotifyMQTT", "GeotifyStore", "GeotifyTestSupport", "GeotifyTime"]
        ),
    ]
)
