import Foundation
import GeotifyCore
import GeotifyHTTP
import GeotifyJSON
import GeotifyStore
import GeotifyTime
import Synchronization

/// The web console: the map page, its JSON API and live stream, OwnTracks HTTP mode,
/// `/healthz` and `/metrics`, served by one `HTTPServer` over a `ConsoleBackend`.
///
/// The bridge creates one with its settings' `http` object and itself as the backend,
/// calls `start()` after it is connected and `stop()` before it stops. Updates from the
/// backend are forwarded to every open page: notifications at once, device positions
/// and forgotten devices gathered and sent four times a second (so a flood of fixes
/// costs the pages one message per device per quarter second), fence changes as a
/// notice on which the page fetches the list (`fencesNotice`).
package final class Console: Sendable {
    package let settings: ConsoleSettings
    let backend: any ConsoleBackend
    let scheduler: any Scheduler
    let log: HTTPServer.Log
    let count: HTTPServer.Count
    /// The live stream; a page closed for falling behind is counted
    /// `http_refused.too_far_behind`.
    let stream: EventStream
    let recent: RecentNotifications
    let authenticator: Authenticator?
    let leaflet: StaticFiles
    /// Large answers not yet sent, by user (at most `maximumUnsentAnswers` each).
    package let unsent = UnsentAnswers(maximumPerUser: Console.maximumUnsentAnswers)
    /// The fence list last rendered, while a response still sends it (`fenceList(for:)`).
    let fenceListAnswer = SharedAnswer()
    private let timers = DispatchQueue(label: "geotify.console.timers")
    private let state = Mutex(State())

    private struct State {
        var server: HTTPServer?
        var ticks: [ScheduledWork] = []
        var pendingDevices: [String: PendingDevice] = [:]
        var fencesChanged = false
        var usersStamp: [Int] = []
    }

    /// A device's last update gathered since the last flush: the later of a position and
    /// a forgetting replaces the earlier, so neither overtakes the other.
    private enum PendingDevice {
        case changed(DeviceSnapshot)
        case forgotten
    }

    /// How often gathered device updates are sent, in seconds.
    static let flushInterval = 0.25
    /// How often idle streams get a keep-alive comment, in seconds.
    static let keepAliveInterval = 15.0
    /// How often the users file is checked for changes, in seconds.
    static let usersCheckInterval = 2.0
    /// What the stream sends when the fences changed, whatever the size of the fence book:
    /// the page fetches `/api/fences` on it. The list itself (megabytes for 1 000 devices
    /// with 20 fences each) would pass a stream's bound, closing every page's stream on
    /// each change, and be queued once per page. A constant rather than a count of
    /// changes: the page fetches the newest list whichever notice it saw, and the list
    /// carries no count to compare with.
    static let fencesNotice = ServerSentEvent(name: "fences", data: JSONWriter().string(["changed": true]))
    /// The most shared fences the page is sent (a million do not draw).
    static let maximumSharedFencesShown = 5000
    /// The most large answers (state, fences, devices, GeoJSON export) one user may have
    /// unsent at once (`UnsentAnswers`).
    package static let maximumUnsentAnswers = 4

    /// A console for `backend`, following its updates from now on; reads the users file
    /// now, refusing one that is missing or has a bad line. A page's stream is closed when
    /// more than `maximumPendingPerStream` bytes wait for it (a test makes it small to
    /// reach the bound in a few updates).
    package init(
        settings: ConsoleSettings, backend: any ConsoleBackend, scheduler: any Scheduler,
        log: @escaping HTTPServer.Log, count: @escaping HTTPServer.Count, maximumPendingPerStream: Int = EventStream.defaultMaximumPending
    ) throws(HTTPSettingsError) {
        self.settings = settings
        self.backend = backend
        self.scheduler = scheduler
        self.log = log
        self.count = count
        stream = EventStream(maximumPending: maximumPendingPerStream, onOverflow: { count(HTTPRefusalCode.tooFarBehind.counter) })
        recent = RecentNotifications(capacity: settings.recentNotifications)
        leaflet = StaticFiles(directory: settings.leafletDirectory)
        if let path = settings.usersFile {
            let (users, stamp) = try Console.readUsers(path)
            authenticator = Authenticator(users: users, roles: settings.roles, uptime: { [scheduler] in scheduler.uptime })
            state.withLock { $0.usersStamp = stamp }
            if let warning = users.costWarning { log(.warning, "http: \(path): \(warning)") }
        } else {
            authenticator = nil
        }
        backend.observe { [weak self] update in self?.received(update) }
    }

    /// The site: routes, logins and the base path, without a server (what tests drive).
    package var application: HTTPApplication {
        HTTPApplication(router: Router(routes()), basePath: settings.basePath, authenticator: authenticator)
    }

    /// Starts following the backend and serving; returns the address bound.
    package func start() throws(HTTPServerError) -> ListenAddress {
        var options = settings.server
        options.defaultHeaders = SecurityHeaders.fields(tileOrigins: settings.tileOrigins)
        let application = self.application
        let server = HTTPServer(options: options, scheduler: scheduler, log: log, count: count, admit: application.admit)
        let bound = try server.start()
        if !FileManager.default.fileExists(atPath: settings.leafletDirectory + "/leaflet.js") {
            log(.warning, "http: Leaflet is not in \(settings.leafletDirectory) (install libjs-leaflet or set http.leaflet); the map page cannot draw")
        }
        let ticks = [
            scheduler.repeating(every: Console.flushInterval, on: timers) { [weak self] in self?.flush() },
            scheduler.repeating(every: Console.keepAliveInterval, on: timers) { [weak self] in self?.stream.keepAlive() },
            scheduler.repeating(every: Console.usersCheckInterval, on: timers) { [weak self] in self?.checkUsers() },
        ]
        state.withLock { state in
            state.server = server
            state.ticks = ticks
        }
        log(.info, "http: serving the map on http://\(bound)\(settings.basePath.prefix)/\(authenticator == nil ? " (no logins: loopback only)" : "")")
        return bound
    }

    /// Ends the live streams and stops the server. Idempotent.
    package func stop() {
        let (server, ticks) = state.withLock { state in
            defer {
                state.server = nil
                state.ticks = []
            }
            return (state.server, state.ticks)
        }
        ticks.forEach { $0.cancel() }
        stream.closeAll()
        server?.stop()
    }

    /// Open HTTP connections.
    package var connectionCount: Int {
        state.withLock { $0.server }?.connectionCount ?? 0
    }

    // MARK: - Live updates

    private func received(_ update: ConsoleUpdate) {
        switch update {
        case .device(let snapshot):
            state.withLock { $0.pendingDevices[snapshot.device] = .changed(snapshot) }
        case .deviceForgotten(let device):
            state.withLock { $0.pendingDevices[device] = .forgotten }
        case .notification(let notification):
            recent.add(notification)
            stream.publish(ServerSentEvent(name: "notification", data: JSONWriter().string(notification)))
        case .fencesChanged:
            state.withLock { $0.fencesChanged = true }
        }
    }

    /// Sends the gathered device updates (`device` with the device's state, `forgotten`
    /// with `{"device": ...}` for one the bridge forgot) and, if the fences changed, the
    /// notice of it (what the quarter-second tick does).
    package func flush() {
        let (devices, fencesChanged) = state.withLock { state in
            defer {
                state.pendingDevices = [:]
                state.fencesChanged = false
            }
            return (state.pendingDevices, state.fencesChanged)
        }
        for (device, pending) in devices.sorted(by: { $0.key < $1.key }) {
            switch pending {
            case .changed(let snapshot):
                stream.publish(ServerSentEvent(name: "device", data: JSONWriter().string(snapshot.json)))
            case .forgotten:
                stream.publish(ServerSentEvent(name: "forgotten", data: JSONWriter().string(["device": .string(device)])))
            }
        }
        if fencesChanged {
            stream.publish(Console.fencesNotice)
        }
    }

    // MARK: - Users file

    /// Re-reads the users file when it changed; a bad new version is logged and the
    /// users in force are kept.
    func checkUsers() {
        guard let path = settings.usersFile, let authenticator else { return }
        let stamp = Console.stamp(of: path)
        guard stamp != state.withLock({ $0.usersStamp }) else { return }
        do {
            let (users, newStamp) = try Console.readUsers(path)
            authenticator.replace(users)
            state.withLock { $0.usersStamp = newStamp }
            log(.info, "http: read \(Counted(users.hashes.count, "user")) from \(path)")
            if let warning = users.costWarning { log(.warning, "http: \(path): \(warning)") }
        } catch {
            state.withLock { $0.usersStamp = stamp }
            log(.error, "http: the users file changed and is not valid, the previous users stay: \(error.message)")
        }
    }

    /// The users in `path` and the file's stamp (device, inode, size, modification time).
    static func readUsers(_ path: String) throws(HTTPSettingsError) -> (UsersFile, [Int]) {
        let stamp = stamp(of: path)
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, within: .users)
        } catch {
            throw HTTPSettingsError("cannot read the users file \(path): \(error.reason)")
        }
        guard let bytes else {
            throw HTTPSettingsError("cannot read the users file \(path) (make it with htpasswd -B -c \(path) USER)")
        }
        return (try UsersFile(parsing: String(decoding: bytes, as: UTF8.self), file: path), stamp)
    }

    private static func stamp(of path: String) -> [Int] {
        var status = stat()
        guard stat(path, &status) == 0 else { return [] }
        return [Int(status.st_dev), Int(status.st_ino), Int(status.st_size), Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec)]
    }
}
