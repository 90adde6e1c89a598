// swift-tools-version:6.0
import PackageDescription

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
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(name: "GeotifyJSON"),
        .target(name: "GeotifyTime"),
        .target(name: "GeotifyCore"),
        .target(name: "GeotifyStore", dependencies: ["GeotifyCore", "GeotifyJSON", "CSQLite"]),
        .target(name: "GeotifyMQTT", dependencies: ["CMosquitto", "GeotifyTime"]),
        .target(name: "GeotifyBridge", dependencies: ["GeotifyCore", "GeotifyJSON", "GeotifyStore", "GeotifyMQTT", "GeotifyTime"]),
        .executableTarget(name: "geotify", dependencies: ["GeotifyBridge"]),
        .executableTarget(
            name: "geotify-bench",
            dependencies: ["CMosquitto", "GeotifyBridge", "GeotifyCore", "GeotifyJSON", "GeotifyMQTT", "GeotifyStore"]
        ),

        .target(name: "GeotifyTestSupport", dependencies: ["GeotifyMQTT"], path: "Tests/GeotifyTestSupport"),
        .testTarget(name: "GeotifyJSONTests", dependencies: ["GeotifyJSON", "GeotifyTestSupport"]),
        .testTarget(name: "GeotifyTimeTests", dependencies: ["GeotifyTime"]),
        .testTarget(name: "GeotifyCoreTests", dependencies: ["GeotifyCore", "GeotifyTestSupport"], exclude: ["Reference"]),
        .testTarget(name: "GeotifyStoreTests", dependencies: ["GeotifyStore"]),
        .testTarget(name: "GeotifyMQTTTests", dependencies: ["GeotifyMQTT", "GeotifyTestSupport"]),
        .testTarget(name: "GeotifyBridgeTests", dependencies: ["GeotifyBridge", "GeotifyMQTT", "GeotifyTestSupport"]),
        .testTarget(name: "geotifyTests", dependencies: ["geotify", "GeotifyMQTT", "GeotifyTestSupport"]),
    ]
)
