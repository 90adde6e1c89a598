import Dispatch
import Foundation
import GeotifyBridge
import GeotifyStore
import GeotifyTime

/// `geotify run`: the bridge itself, until SIGTERM or SIGINT stops it gracefully.
enum RunCommand {
    static let flags = ["broker", "fences", "state-dir", "log-level"]
    static let options = SettingsOptions.options(flags) + [
        CommandOption(
            name: "reset-state", placeholder: nil,
            help: "set the state files aside (renamed, not deleted) and start with empty state, when the state database is refused"),
    ]

    static let help = """
        usage: geotify run [options]

        Connects to the broker, evaluates every device's fences and publishes
        notifications and badges until stopped with SIGTERM or SIGINT. The fence file
        is watched and reloaded when it changes, or on SIGHUP.

        options:
        \(CommandOption.help(options))
        """

    static func run(_ words: [String]) throws(UsageError) -> Never {
        let arguments = try Arguments(words, command: "run", options: options)
        try arguments.expectNoPositionals()
        MemoryRelease.limitArenas()
        let chosen = try SettingsOptions.settings(arguments, flags: flags, command: "run")
        var settings = chosen.settings
        settings.resetState = arguments.isSet("reset-state")
        let logger = Logger(level: settings.logLevel)
        do {
            try StateDirectory.prepare(settings.stateDirectory)
        } catch {
            logger.error("\(error)")
            exit(1)
        }
        let bridge = Bridge(settings: settings, logger: logger)
        let sources = stopOnSignals(bridge, logger: logger)
        // The code and constants that only starting uses are let go twice: what the process
        // and the command line touched, before the fence file and the state are read (the
        // peak comes then), and what reading them touched, once the bridge runs: 30 MiB
        // resident became 23 MiB under the side-by-side traffic (docs/memory.md).
        MemoryRelease.dropStartupPages()
        do {
            try bridge.start()
        } catch {
            logger.error("\(error)")
            if !FileManager.default.fileExists(atPath: settings.fencesPath), let hint = chosen.hint(missing: "fences") { logger.error(hint) }
            exit(1)
        }
        MemoryRelease.dropStartupPages()
        let trimming = MemoryRelease.keepTrimming(every: 5, scheduler: SystemScheduler())
        withExtendedLifetime((sources, trimming)) { dispatchMain() }
    }

    /// Stops `bridge` gracefully and exits 0 on SIGTERM or SIGINT; reloads the fence file
    /// on SIGHUP. The signals are unblocked first, before the bridge starts any thread,
    /// because a parent (a test runner, some supervisors) may have started this process
    /// with them blocked.
    private static func stopOnSignals(_ bridge: Bridge, logger: Logger) -> [DispatchSourceSignal] {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        sigaddset(&blocked, SIGINT)
        sigaddset(&blocked, SIGHUP)
        pthread_sigmask(SIG_UNBLOCK, &blocked, nil)
        // Past a file size limit (ulimit -f), a write should fail with an error the
        // bridge reports and survives, not kill the process.
        signal(SIGXFSZ, SIG_IGN)
        let signals = DispatchQueue(label: "geotify.signals")
        return [SIGTERM, SIGINT, SIGHUP].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: signals)
            source.setEventHandler {
                if signalNumber == SIGHUP {
                    logger.info("received SIGHUP, reloading the fence file")
                    bridge.reloadFences()
                    return
                }
                logger.info("received \(signalNumber == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                bridge.stop()
                exit(0)
            }
            source.resume()
            return source
        }
    }
}
