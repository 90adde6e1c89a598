import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore
#if canImport(Glibc)
import Glibc
#endif

/// The parsers of untrusted input the fuzzer drives, one per target. Each must return
/// a result or a specific error for any bytes at all, never crash; on top of that each
/// checks a property of what it returns (`check` stops the fuzzer with the input that
/// broke it, which then becomes a regression test).
enum FuzzTarget: String, CaseIterable {
    /// An OwnTracks location message (`owntracks/<user>/<device>`), `LocationDecoder`.
    case ownTracks = "owntracks"
    /// A plain JSON location message (`geotify/location/<device>`), `LocationDecoder`.
    case plain
    /// A fence file, `FenceFile.parse`, and each fence it holds through `FenceCodec`.
    case fenceFile = "fence-file"
    /// A command (`geotify/cmd/<device>`), `Command.decode`, and an added fence through
    /// `FenceCodec`.
    case command

    /// The target named by GEOTIFY_FUZZ_TARGET, read once.
    static let selected: FuzzTarget? = getenv("GEOTIFY_FUZZ_TARGET").flatMap { FuzzTarget(rawValue: String(cString: $0)) }

    /// Feeds `bytes` to the target's parser and checks what comes out.
    func run(_ bytes: [UInt8]) {
        switch self {
        case .ownTracks: location(bytes, format: .ownTracks)
        case .plain: location(bytes, format: .plain)
        case .fenceFile: fenceFile(bytes)
        case .command: command(bytes)
        }
    }

    /// A fix, if any, lies on the globe with a non-negative accuracy and time; a refusal
    /// says why.
    private func location(_ bytes: [UInt8], format: LocationDecoder.Format) {
        do {
            guard let fix = try LocationDecoder().decode(bytes, device: "fuzz/device", format: format, arrival: 1_700_000_000)
            else { return }
            check((-90...90).contains(fix.coordinate.latitude), "latitude \(fix.coordinate.latitude)")
            check((-180...180).contains(fix.coordinate.longitude), "longitude \(fix.coordinate.longitude)")
            check(fix.accuracy.map { $0 >= 0 && $0.isFinite } ?? true, "accuracy \(String(describing: fix.accuracy))")
            check(fix.timestamp >= 0 && fix.timestamp.isFinite, "timestamp \(fix.timestamp)")
        } catch {
            check(!error.message.isEmpty, "an error without a message")
        }
    }

    /// A file yields fences exactly when it has no errors, and every fence it yields
    /// reads back from its own JSON form as the same fence (what rewriting the file and
    /// `fences export` rely on).
    private func fenceFile(_ bytes: [UInt8]) {
        let limits = FenceLimits()
        let loaded = FenceFile(path: "fuzz.json", limits: limits).parse(bytes)
        check((loaded.book == nil) == !loaded.errors.isEmpty, "a book together with errors, or neither")
        for fences in loaded.book?.devices.values.map({ $0 }) ?? [] {
            for fence in fences {
                let again = FenceCodec.decode(FenceCodec.encode(fence), limits: limits)
                check(again.fence == fence, "fence \(fence.identifier) does not read back: \(again.errors)")
            }
        }
    }

    /// A command decodes or is refused with a message; a fence it adds is validated as
    /// the fence file's are.
    private func command(_ bytes: [UInt8]) {
        let decoded = Command.decode(bytes, maximumBytes: 65_536)
        switch decoded.result {
        case .success(let command):
            if case .add(let fence) = command.action {
                let result = FenceCodec.decode(fence, limits: FenceLimits())
                check((result.fence == nil) == !result.issues.isEmpty, "a fence together with issues, or neither")
            }
        case .failure(let error):
            check(!error.message.isEmpty, "an error without a message")
        }
    }

    /// Stops the fuzzer, naming the broken property, unless `condition` holds.
    private func check(_ condition: Bool, _ property: @autoclosure () -> String) {
        if !condition {
            fatalError("\(rawValue): \(property())")
        }
    }
}
