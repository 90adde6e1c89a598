import Foundation

/// The directory holding the built products (the `geotify` executable beside the test
/// bundle), so CLI tests can run `productsDirectory.appendingPathComponent("geotify")`.
/// Found from the running `.xctest` bundle: on Linux it is an executable file inside the
/// products directory, on macOS a bundle directory there.
package var productsDirectory: URL {
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        return bundle.bundleURL.deletingLastPathComponent()
    }
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    if executable.lastPathComponent.hasSuffix(".xctest") {
        return executable.deletingLastPathComponent()
    }
    return Bundle.main.bundleURL
}
