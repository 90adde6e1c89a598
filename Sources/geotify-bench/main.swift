import Foundation

switch BenchOptions.parse(Array(CommandLine.arguments.dropFirst())) {
case .failure(let problem):
    if let message = problem.message {
        FileHandle.standardError.write(Data("geotify-bench: \(message)\n\(BenchOptions.usage)\n".utf8))
        exit(2)
    }
    print(BenchOptions.usage)
case .success(let options):
    if let probe = options.memoryProbe {
        print(MemoryScenario(options: options).measure(probe))
    } else {
        print(Bench(options: options).run())
    }
}
