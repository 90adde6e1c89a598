import Foundation
import GeotifyConsole
import GeotifyConsoleFixture
import GeotifyHTTP
import GeotifyJSON
import GeotifyTime

// The web console over `FixtureBridge`, for the browser harness (Tests/Browser) until it
// runs against the real bridge: `geotify-console-fixture --fences FILE [--settings FILE]`.
// The settings file holds `{"http": {...}}` as geotify.json does. Prints
// `listening http://HOST:PORT` on standard output once it serves, reads the fence file
// again on SIGHUP (as the bridge does), and stops on SIGTERM or SIGINT.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("geotify-console-fixture: \(message)\n".utf8))
    exit(2)
}

var arguments = CommandLine.arguments.dropFirst()
var fencesPath: String?
var settingsPath: String?
while let argument = arguments.popFirst() {
    switch argument {
    case "--fences": fencesPath = arguments.popFirst()
    case "--settings": settingsPath = arguments.popFirst()
    default: fail("unknown argument \(argument); usage: --fences FILE [--settings FILE]")
    }
}
guard let fencesPath else { fail("--fences FILE is required") }

var settings = ConsoleSettings()
settings.server.listen.port = 0
if let settingsPath {
    guard let data = FileManager.default.contents(atPath: settingsPath),
          let json = try? JSONParser().parse(Array(data)), let http = json["http"]?.objectValue
    else { fail("\(settingsPath) must be a JSON object with an \"http\" object") }
    do {
        settings = try ConsoleSettings(parsing: http, file: settingsPath)
    } catch {
        fail(error.message)
    }
}

let scheduler = SystemScheduler()
let bridge = FixtureBridge(fencesPath: fencesPath, scheduler: scheduler)
let console: Console
do {
    console = try Console(
        settings: settings, backend: bridge, scheduler: scheduler,
        log: { level, message in
            if level != .debug { FileHandle.standardError.write(Data("\(level) \(message)\n".utf8)) }
        },
        count: { bridge.add($0) })
} catch {
    fail(error.message)
}
do {
    let bound = try console.start()
    FileHandle.standardOutput.write(Data("listening http://\(bound)\n".utf8))
} catch {
    fail(error.message)
}

var sources: [DispatchSourceSignal] = []
signal(SIGHUP, SIG_IGN)
let hangUp = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .main)
hangUp.setEventHandler { bridge.reloadFences() }
hangUp.resume()
sources.append(hangUp)
for signalNumber in [SIGTERM, SIGINT] {
    signal(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        console.stop()
        exit(0)
    }
    source.resume()
    sources.append(source)
}
dispatchMain()
