import CFuzzerDriver
#if canImport(Glibc)
import Glibc
#endif

/// The fuzzer: runs libFuzzer on the target named by the environment variable
/// GEOTIFY_FUZZ_TARGET (see `FuzzTarget`), passing it the command line (libFuzzer's
/// flags and corpus directories). It has a main of its own, calling libFuzzer's
/// `LLVMFuzzerRunDriver`, because SwiftPM gives every executable one.
guard FuzzTarget.selected != nil else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    let message = Array("geotify-fuzz: set GEOTIFY_FUZZ_TARGET to one of \(names)\n".utf8)
    _ = write(2, message, message.count)
    exit(2)
}
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
    FuzzTarget.selected?.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
})
