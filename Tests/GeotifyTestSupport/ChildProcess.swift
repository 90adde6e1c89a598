import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` with an empty signal mask and default
/// signal handlers, for tests that stop what they start with signals (the broker, the
/// `geotify` executable).
///
/// Foundation's `Process` passes on the signal mask of the thread that starts it, and
/// the threads tests run on block SIGTERM, SIGINT and SIGHUP: a child started there
/// ignores `terminate()`. This type does not have that problem, and reaps its child with
/// `waitpid`, so no zombie outlives it (it SIGKILLs a child still running at release).
package final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    package let pid: pid_t
    private let status = Mutex<Int32?>(nil)

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's
    /// Glibc module does not import: a spawn action that closes every descriptor from a
    /// number on in the child. Looked up once; nil on a C library without it.
    private static let closeFrom = lookUp(
        "posix_spawn_file_actions_addclosefrom_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), not imported
    /// either: a spawn action that changes the child's working directory.
    private static let changeDirectory = lookUp(
        "posix_spawn_file_actions_addchdir_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)

    /// The C library's function `name` as a `Function`; nil when it has none.
    private static func lookUp<Function>(_ name: String, as _: Function.Type) -> Function? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }

    /// Starts `executable` (a path, or a name looked up on PATH) with `arguments`, its
    /// standard input from `standardInput` (a descriptor, such as a pipe's read end) or
    /// /dev/null, and its standard output and error appended to `outputFile` (or
    /// discarded when nil), its standard error to `errorFile` instead when given.
    /// `environment` replaces the test process's environment when given; `directory` is
    /// its working directory (the test process's when nil). With `newProcessGroup` the
    /// child leads a process group of its own, which `signalGroup` reaches as a
    /// terminal's Ctrl-C reaches its foreground jobs.
    package init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String]? = nil,
        outputFile: URL? = nil,
        errorFile: URL? = nil,
        directory: URL? = nil,
        standardInput: Int32? = nil,
        newProcessGroup: Bool = false
    ) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGCHLD] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let standardInput {
            posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(
            &actions, 1, outputFile?.path ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644
        )
        if let errorFile {
            posix_spawn_file_actions_addopen(&actions, 2, errorFile.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        if let directory {
            guard let changeDirectory = ChildProcess.changeDirectory else {
                throw TestSupportError("cannot start \(executable) in \(directory.path): this C library has no posix_spawn_file_actions_addchdir_np")
            }
            let result = directory.path.withCString { changeDirectory(&actions, $0) }
            guard result == 0 else {
                throw TestSupportError("cannot start \(executable) in \(directory.path): \(String(cString: strerror(result)))")
            }
        }
        // Nothing else of the test process: tests run in parallel, and a descriptor a
        // child inherits stays open in it (a socket pair's writer a test closes to see
        // its reader's end of stream, a connection a test expects to close).
        _ = ChildProcess.closeFrom?(&actions, 3)

        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var argv = ([executable] + arguments).map { strdup($0) }
        argv.append(nil)
        var envp = environment.map { strdup($0) }
        envp.append(nil)
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let spawn = executable.contains("/") ? posix_spawn : posix_spawnp
        let result = spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw TestSupportError("cannot start \(executable): \(String(cString: strerror(result)))\(Self.missingHint(executable, result))")
        }
        pid = child
    }

    /// What to do when `executable` could not be started for `result` (an `errno`): the
    /// tests' Python is not installed in a fresh checkout until
    /// `scripts/install-dependencies` has run (`./scripts/test` runs it first); a suite
    /// run on its own would otherwise fail with a bare "No such file or directory".
    package static func missingHint(_ executable: String, _ result: Int32) -> String {
        guard result == ENOENT, executable == testPython else { return "" }
        return " (the tests' Python packages are not installed: run scripts/install-dependencies, which ./scripts/test runs first)"
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: 5)
        }
    }

    /// Whether the child has not exited yet (reaping it if it has).
    package var isRunning: Bool {
        reap() == nil
    }

    /// Sends `signal` (SIGTERM by default) to the child if it still runs.
    package func terminate(signal: Int32 = SIGTERM) {
        if isRunning {
            kill(pid, signal)
        }
    }

    /// Sends `signal` to every process of the child's process group (started with
    /// `newProcessGroup`) while the child runs.
    package func signalGroup(_ signal: Int32) {
        if isRunning {
            kill(-pid, signal)
        }
    }

    /// Sends `signal` every 0.1 s until the child exits, for up to `timeout` seconds,
    /// then SIGKILL (waiting up to 5 s more). Again and again, not once: mosquitto loses
    /// a SIGTERM that comes while it finishes starting (it already listens, and sets its
    /// running flag after installing its handler).
    package func stop(signal: Int32 = SIGTERM, timeout: Double = 10) {
        for _ in 0..<max(1, Int(timeout * 10)) {
            terminate(signal: signal)
            if waitForExit(timeout: 0.1) { return }
        }
        terminate(signal: SIGKILL)
        _ = waitForExit(timeout: 5)
    }

    /// Waits up to `timeout` seconds for the child to exit; says whether it did.
    package func waitForExit(timeout: Double = 10) -> Bool {
        waitUntil(timeout: timeout) { !isRunning }
    }

    /// The exit code, once the child has exited normally; nil while it runs or if a
    /// signal ended it.
    package var exitCode: Int32? {
        guard let status = reap(), status & 0x7F == 0 else { return nil }
        return (status >> 8) & 0xFF
    }

    /// The signal that ended the child, if one did.
    package var terminationSignal: Int32? {
        guard let status = reap(), status & 0x7F != 0, status & 0x7F != 0x7F else { return nil }
        return status & 0x7F
    }

    /// The child's wait status once it has exited, reaping it on the first call after.
    private func reap() -> Int32? {
        status.withLock { status in
            if status == nil {
                var raw: Int32 = 0
                let result = waitpid(pid, &raw, WNOHANG)
                if result == pid {
                    status = raw
                } else if result == -1, errno == ECHILD {
                    status = -1
                }
            }
            return status
        }
    }
}
