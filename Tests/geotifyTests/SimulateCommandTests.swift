import Foundation
import Testing
import GeotifyTestSupport

/// `geotify simulate` replays tracks through the real evaluator, offline.
@Suite("geotify simulate", .waiting)
struct SimulateCommandTests {
    let directory: URL

    init() throws {
        directory = try makeTemporaryDirectory("simulate")
        try """
            {"devices": {"alice/phone": [{"identifier": "home", "latitude": \(RecordedTrack.center.latitude),
              "longitude": \(RecordedTrack.center.longitude), "radius": \(RecordedTrack.radius),
              "note": "Welcome home", "eventType": "onEntryAndExit"}]}}
            """.write(to: directory.appendingPathComponent("fences.json"), atomically: true, encoding: .utf8)
        try RecordedTrack().ownTracksLines.write(to: directory.appendingPathComponent("track.jsonl"), atomically: true, encoding: .utf8)
    }

    func simulate(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try runGeotify(["simulate"] + arguments + ["--fences", "fences.json"], in: directory)
    }

    @Test func theRulesTurnAnHourOfJitterIntoTheRealWalkOutAndBack() throws {
        let result = try simulate(["track.jsonl"])
        #expect(result.status == 0)
        #expect(result.output == """
            2023-11-14T23:13:50Z  alice/phone  exit  home  badge 1  Welcome home
            2023-11-14T23:33:20Z  alice/phone  enter  home  badge 2  Welcome home

            """)
        #expect(result.error == "164 fixes: 161 evaluated, 3 too inaccurate, 0 out of order; 2 transitions, 2 notifications\n")
    }

    @Test func withoutTheRulesTheSameTrackFlaps() throws {
        let result = try simulate(["track.jsonl", "--no-rules", "--json"])
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 51)
        #expect(lines.allSatisfy { $0.hasPrefix(#"{"id":"alice/phone/home/"#) })
    }

    @Test func gpxTracksReplayToo() throws {
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
              <trk><trkseg>
                <trkpt lat="52.50" lon="13.405"><time>2023-11-14T22:00:00Z</time></trkpt>
                <trkpt lat="52.52" lon="13.405"><time>2023-11-14T22:01:00Z</time></trkpt>
                <trkpt lat="52.52" lon="13.405"></trkpt>
              </trkseg></trk>
            </gpx>
            """.write(to: directory.appendingPathComponent("walk.gpx"), atomically: true, encoding: .utf8)
        let result = try simulate(["walk.gpx"])
        #expect(result.status == 0)
        #expect(result.output == "2023-11-14T22:01:00Z  alice/phone  enter  home  badge 1  Welcome home\n")
        #expect(result.error.contains("warning: walk.gpx: line 6: a trkpt without a readable time"))
    }

    @Test func gpxAccuracyComesFromHDOP() throws {
        try """
            <gpx><trk><trkseg>
              <trkpt lat="52.50" lon="13.405"><time>2023-11-14T22:00:00Z</time><hdop>1</hdop></trkpt>
              <trkpt lat="52.52" lon="13.405"><time>2023-11-14T22:01:00Z</time><hdop>200</hdop></trkpt>
              <trkpt lat="52.52" lon="13.405"><time>2023-11-14T22:02:00Z</time><hdop>2</hdop></trkpt>
            </trkseg></trk></gpx>
            """.write(to: directory.appendingPathComponent("hdop.gpx"), atomically: true, encoding: .utf8)
        let result = try simulate(["hdop.gpx"])
        #expect(result.status == 0)
        #expect(result.output == "2023-11-14T22:02:00Z  alice/phone  enter  home  badge 1  Welcome home\n")
        #expect(result.error == "3 fixes: 2 evaluated, 1 too inaccurate, 0 out of order; 1 transitions, 1 notifications\n")
        #expect(try runGeotify(["simulate", "--help"], in: directory).output.contains("accuracy is its <hdop> × 5 m"))
    }

    @Test func anUnknownDeviceIsRefusedNamingTheKnownOnes() throws {
        let result = try simulate(["track.jsonl", "--device", "alice/phon"])
        #expect(result.status == 2)
        #expect(result.output == "")
        #expect(result.error == "geotify: the fence file has no device \"alice/phon\" (did you mean \"alice/phone\"? it has alice/phone) (see 'geotify simulate --help')\n")
    }

    /// Without `--device`, a fence file of several devices is a usage error naming them;
    /// with it, a device the file does not name is taken when fences are shared with
    /// every device, since those apply to it.
    @Test func theDeviceIsTheOnlyOneOrNamedOrSharedFencesApply() throws {
        try """
            {"devices": {"alice/phone": [], "bob/phone": []},
             "shared": [{"identifier": "home", "latitude": \(RecordedTrack.center.latitude), "longitude": \(RecordedTrack.center.longitude),
                         "radius": \(RecordedTrack.radius), "eventType": "onEntryAndExit"}]}
            """.write(to: directory.appendingPathComponent("shared.json"), atomically: true, encoding: .utf8)
        let unnamed = try runGeotify(["simulate", "track.jsonl", "--fences", "shared.json"], in: directory)
        #expect(unnamed.status == 2)
        #expect(unnamed.error.hasPrefix("geotify: the fence file has 2 devices (alice/phone, bob/phone); say which one the track is with --device"))
        let other = try runGeotify(["simulate", "track.jsonl", "--fences", "shared.json", "--device", "carol/phone"], in: directory)
        #expect(other.status == 0, "\(other.error)")
        #expect(other.output.contains("carol/phone  enter  home"), "\(other.output)")
    }

    @Test func aTrackWithNothingToEvaluateExitsOne() throws {
        try "no positions here\n{\"lat\": 52.5}\n".write(to: directory.appendingPathComponent("empty.jsonl"), atomically: true, encoding: .utf8)
        let result = try simulate(["empty.jsonl"])
        #expect(result.status == 1)
        #expect(result.error.hasSuffix("0 fixes: 0 evaluated, 0 too inaccurate, 0 out of order; 0 transitions, 0 notifications\nerror: empty.jsonl: no fix was evaluated: the track holds no usable fix\n"))
    }

    @Test func errorsNameTheProblem() throws {
        let missing = try simulate(["nope.jsonl"])
        #expect(missing.status == 1)
        #expect(missing.error == "error: nope.jsonl: no such file\n")
        let usage = try simulate([])
        #expect(usage.status == 2)
        #expect(usage.error.contains("missing the track file"))
        try "<gpx><trk>".write(to: directory.appendingPathComponent("broken.gpx"), atomically: true, encoding: .utf8)
        let broken = try simulate(["broken.gpx"])
        #expect(broken.status == 1)
        #expect(broken.error == "error: broken.gpx: a GPX file without track points (trkpt, rtept or wpt)\n")
    }
}
