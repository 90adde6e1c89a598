/// The map page's own files, built into the executable (SwiftPM's `embedInCode`), so
/// the binary serves its page with nothing to install beside it but Leaflet.
enum ConsolePage {
    static let html: [UInt8] = PackageResources.index_html
    static let script: [UInt8] = PackageResources.console_js
    static let style: [UInt8] = PackageResources.console_css
}
