// swift-tools-version:6.0
import PackageDescription

// Fuzz targets for Geotify's parsers of untrusted input, kept in a package of their own
// so the fuzzer's instrumentation (-sanitize=fuzzer,address) never touches the main
// build. Build and run them with scripts/fuzz; see RESULTS.md.
let package = Package(
    name: "GeotifyFuzz",
    dependencies: [.package(name: "Geotify", path: "..")],
    targets: [
        .target(name: "CFuzzerDriver"),
        .executableTarget(
            name: "geotify-fuzz",
            dependencies: ["CFuzzerDriver", .product(name: "GeotifyLibrary", package: "Geotify")]
        ),
    ]
)
