import Dispatch
import Foundation
import GeotifyBridge
import GeotifyHTTP
import GeotifyStore
import GeotifyTime
import Synchronization

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
        if let limit = OpenFileLimit.raiseToHard() {
            logger.debug("raised the limit of open files from \(limit.before) to \(limit.after) (the hard limit)")
        }
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
        started.store(true, ordering: .releasing)
        MemoryRelease.dropStartupPages()
        let trimming = MemoryRelease.keepTrimming(every: 5, scheduler: SystemScheduler())
        withExtendedLifetime((sources, trimming)) { dispatchMain() }
    }

    /// Whether `bridge.start()` has returned.
    private static let started = Atomic<Bool>(false)
    /// How many SIGTERMs and SIGINTs have come.
    private static let stopSignals = Atomic<Int>(0)
    /// How long a SIGTERM or SIGINT that comes while the bridge starts waits for the start
    /// to end (and the graceful stop to begin) before the process exits without one.
    static let startGrace = 5.0

    /// Stops `bridge` gracefully and exits 0 on SIGTERM or SIGINT; reloads the fence file
    /// on SIGHUP. The signals are unblocked first, before the bridge starts any thread,
    /// because a parent (a test runner, some supervisors) may have started this process
    /// with them blocked.
    ///
    /// The stop runs on a queue of its own, so the signals are still heard while it waits:
    /// a stop waits for a start under way to end, and a start may block (a TLS file that is
    /// a FIFO nobody writes, a file system that does not answer), which kept the process
    /// until SIGKILL after "received SIGTERM, stopping". A signal during the start exits
    /// without a graceful stop if the start has not ended `startGrace` seconds later (the
    /// state is kept as after a crash, which it survives), and a second SIGTERM or SIGINT
    /// exits at once, during the start or a stop.
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
        let stopping = DispatchQueue(label: "geotify.stop")
        let (sources, ready) = SignalSources.make([SIGTERM, SIGINT, SIGHUP], queue: signals) { signalNumber in
            if signalNumber == SIGHUP {
                // A reload would race the stop's closing of the fence book and stores.
                guard stopSignals.load(ordering: .relaxed) == 0 else {
                    logger.info("received SIGHUP while stopping, not reloading")
                    return
                }
                logger.info("received SIGHUP, reloading the fence file")
                bridge.reloadFences()
                return
            }
            let name = signalNumber == SIGTERM ? "SIGTERM" : "SIGINT"
            guard stopSignals.add(1, ordering: .relaxed).newValue == 1 else {
                logger.warning("received \(name) again, exiting without stopping gracefully")
                _exit(1)
            }
            if started.load(ordering: .acquiring) {
                logger.info("received \(name), stopping")
            } else {
                logger.info("received \(name) while starting, stopping once the start has ended (exiting in \(Int(startGrace)) s if it has not; \(name) again exits at once)")
                signals.asyncAfter(deadline: .now() + startGrace) {
                    guard !started.load(ordering: .acquiring) else { return }
                    logger.error("the start did not end within \(Int(startGrace)) s of \(name); exiting without stopping gracefully")
                    _exit(1)
                }
            }
            stopping.async {
                bridge.stop()
                exit(0)
            }
        }
        if !ready {
            logger.warning("the signal handlers were not ready within \(Int(SignalSources.registrationTimeout)) s of being set up; a SIGTERM before they are may go unheard")
        }
        return sources
    }
}
