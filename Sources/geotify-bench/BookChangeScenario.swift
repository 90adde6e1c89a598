import Foundation
import GeotifyBridge
import GeotifyCore
import GeotifyMQTT

/// What one device's fence change costs the lane that holds many devices: the first batch
/// and tick after a book comes into force (fences gone, admission places and timer
/// deadlines: `LaneCore.leaveRemovedFences`, `reckonAdmission`, `retime`), beside the
/// same one-message batch and tick with the book unchanged (a fence command:
/// `FenceBook.replacing`), and beside the same after a book with no forebear (an edit of
/// the file: the book read again, `revised(from:)`, against one made as before
/// `FenceBook.inheriting`); and a preview's batch beside the whole book a preview made
/// before `FenceBook.view(of:replacedBy:)`. A lane decides nothing else meanwhile, so
/// this is how long a fence command or a file edit holds back every other device's
/// positions in that lane.
struct BookChangeScenario {
    /// The devices of the lane (each named by the book, with `fencesPerDevice` circles).
    let devices: Int
    static let fencesPerDevice = 2
    /// Commands measured; the median counts.
    static let changes = 21
    /// File edits measured (each makes two books of every device); the median counts.
    static let edits = 7

    func run() -> [ResultRow] {
        let now = BenchClock.wall()
        var settings = Settings()
        settings.lanes = 1
        settings.homeAssistantEnabled = false
        settings.maximumDevices = devices + 1
        let names = (0..<devices).map { "u\($0)/phone" }
        func place(_ number: Int) -> Coordinate {
            Coordinate(latitude: 40 + Double(number % 1_000) * 0.01, longitude: -3 + Double(number / 1_000) * 0.01)
        }
        func fences(_ number: Int, count: Int) -> [Fence] {
            (0..<count).map { index in
                Fence(
                    identifier: "f\(index)", region: .circle(center: place(number), radius: 100 + 50 * Double(index)), note: "",
                    eventType: [.onEntry, .onExit])
            }
        }
        var own: [String: [Fence]] = [:]
        for (number, name) in names.enumerated() { own[name] = fences(number, count: Self.fencesPerDevice) }
        let book = FenceBook(devices: own)
        func message(_ number: Int, at time: Double) -> Inbound {
            let topic = "owntracks/\(names[number])"
            let payload = OwnTracksPayloads.location(place(number), accuracy: 10, timestamp: time, variant: number)
            return Inbound(route: .location(.ownTracks), device: names[number], message: MQTTMessage(topic: topic, payload: payload), arrival: now)
        }
        let configuration = LaneConfiguration(settings: settings)
        var core = LaneCore(
            configuration: configuration, admission: DeviceAdmission(maximum: settings.maximumDevices, perOwner: settings.maximumDevicesPerOwner),
            states: [:], book: book, now: now)
        var start = 0
        while start < devices {
            let end = min(start + 64, devices)
            var effects = LaneEffects()
            core.handle((start..<end).map { message($0, at: now - 100) }, book: book, into: &effects)
            start = end
        }
        var current = book
        var clock = now - 50
        /// The lane's first batch and tick with `next` in force, and `next` put in force.
        func look(at next: FenceBook, device number: Int) -> Double {
            var effects = LaneEffects()
            let after = message((number + 1) % devices, at: clock)
            clock += 1
            let seconds = Self.time {
                core.handle([after], book: next, into: &effects)
                core.tick(now: now, book: next, into: &effects)
            }
            current = next
            return seconds
        }
        var unchanged: [Double] = []
        var commanded: [Double] = []
        for change in 0..<Self.changes {
            let number = (change * 7_919) % devices
            unchanged.append(look(at: current, device: number))
            commanded.append(look(at: current.replacing(devices: [names[number]: fences(number, count: Self.fencesPerDevice + 1 + change % 2)]), device: number))
        }
        var edited: [Double] = []
        var readAnew: [Double] = []
        var comparing: [Double] = []
        for edit in 0..<Self.edits {
            let number = (edit * 6_007 + 13) % devices
            var devicesInFile = current.devices
            devicesInFile[names[number]] = fences(number, count: Self.fencesPerDevice + 1 + edit % 2)
            // As an edit was read before `inheriting`: a book with no forebear.
            let anew = FenceBook(devices: devicesInFile).revised(knownRevisions: current.knownRevisions, currentRevision: current.revision)
            readAnew.append(look(at: anew, device: number))
            devicesInFile[names[number]] = fences(number, count: Self.fencesPerDevice + (edit % 2))
            let parsed = FenceBook(devices: devicesInFile).revised(knownRevisions: current.knownRevisions, currentRevision: current.revision)
            let previous = current
            var inherited = parsed
            comparing.append(Self.time { inherited = parsed.inheriting(from: previous) })
            edited.append(look(at: inherited, device: number))
        }
        // A preview (the Peek) of a new circle for one device: the batch of that command,
        // beside what making a whole book for it cost (`FenceBook.replacing`, which a
        // preview made before `FenceBook.view(of:replacedBy:)`: a copy of the book's
        // tables, shared with the lanes).
        var previewed: [Double] = []
        var wholeBook: [Double] = []
        var previewsAnswered = 0
        for preview in 0..<Self.changes {
            let number = (preview * 4_001 + 7) % devices
            let center = place(number)
            let payload = #"{"id":"p\#(preview)","action":"preview","change":{"action":"add","fence":{"identifier":"new","latitude":\#(center.latitude),"longitude":\#(center.longitude),"radius":80,"eventType":"onEntry"}}}"#
            let command = Inbound(
                route: .command, device: names[number], message: MQTTMessage(topic: "geotify/cmd/\(names[number])", payload: Array(payload.utf8)),
                arrival: now)
            var effects = LaneEffects()
            previewed.append(Self.time { core.handle([command], book: current, into: &effects) })
            let reply = effects.direct.first { $0.topic.hasPrefix("geotify/reply/") }.map { String(decoding: $0.payload, as: UTF8.self) } ?? ""
            if reply.contains(#""ok":true"#) && reply.contains(#""token""#) { previewsAnswered += 1 }
            let book = current
            wholeBook.append(Self.time { _ = book.replacing(devices: [names[number]: fences(number, count: Self.fencesPerDevice + 1)]) })
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        let lane = "\(ResultRow.count(devices)) devices in the lane (thread CPU"
        return [
            ResultRow(
                scenario: "lane", measure: "the first batch and tick after a command changes one device's fences, \(lane), median of \(Self.changes))",
                value: median(commanded) * 1e3, unit: .milliseconds,
                baseline: median(unchanged) * 1e3, baselineName: "the same, book unchanged",
                detail: "one position a batch; each change adds or removes one of a device's circles"),
            ResultRow(
                scenario: "lane", measure: "the first batch and tick after an edit of the file changes one device's fences, \(lane), median of \(Self.edits))",
                value: median(edited) * 1e3, unit: .milliseconds,
                baseline: median(readAnew) * 1e3, baselineName: "the same, the book read again with no forebear (before FenceBook.inheriting)",
                detail: "the reader's comparison of the books (FenceBook.inheriting, not on a lane): \(ResultRow.format(median(comparing) * 1e3, .milliseconds))"),
            ResultRow(
                scenario: "lane", measure: "a preview of one device's new circle (the command's batch), \(lane), median of \(Self.changes))",
                value: median(previewed) * 1e3, unit: .milliseconds,
                baseline: median(wholeBook) * 1e3, baselineName: "making a whole book for it, as a preview did before (FenceBook.replacing)",
                detail: "the reply, the relation and the notification the device's next fix would cause, from the device's own view of the change; \(previewsAnswered) of \(Self.changes) answered ok with a token\(previewsAnswered == Self.changes ? "" : " (A PREVIEW FAILED)")"),
        ]
    }

    private static func time(_ body: () -> Void) -> Double {
        let start = BenchClock.threadCPU()
        body()
        return BenchClock.threadCPU() - start
    }
}
