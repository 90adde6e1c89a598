import GeotifyCore
import GeotifyJSON

/// A recorded track of one device, read from a file for offline replay (`geotify
/// simulate`): OwnTracks location messages one a line (as the OwnTracks Recorder
/// stores them: anything before the first `{` on a line, such as its timestamp
/// columns, is skipped), plain JSON positions one a line, or GPX (`trkpt`, `rtept`
/// and `wpt` with `time`, accuracy from `hdop`: see `GPXReader`).
package struct Track: Sendable {
    /// The fixes in file order.
    package var fixes: [Fix]
    /// Lines that were not positions, with why (line number: reason); non-location
    /// OwnTracks messages are skipped silently.
    package var problems: [String]

    /// How GPX points get their accuracy, for help text.
    package static let gpxAccuracyRule = """
        GPX has no accuracy in metres: a point's accuracy is its <hdop> × \(JSONWriter.text(of: GPXReader.metresPerHDOP)) m; a
        point without <hdop> counts as accurate (as an OwnTracks fix without "acc"),
        and one whose <hdop> is not a number from 0 is a problem, not a fix.
        """

    /// Reads a track for `device` from `bytes`.
    package init(parsing bytes: [UInt8], device: String, decoder: LocationDecoder = LocationDecoder()) throws(TrackError) {
        let firstByte = bytes.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if firstByte == UInt8(ascii: "<") {
            self = try Track.gpx(bytes, device: device)
        } else {
            self = Track.lines(bytes, device: device, decoder: decoder)
        }
    }

    private init(fixes: [Fix], problems: [String]) {
        self.fixes = fixes
        self.problems = problems
    }

    private static func lines(_ bytes: [UInt8], device: String, decoder: LocationDecoder) -> Track {
        var fixes: [Fix] = []
        var problems: [String] = []
        for (number, line) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            guard let start = line.firstIndex(of: UInt8(ascii: "{")) else {
                if line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) {
                    problems.append("line \(number + 1): no JSON object")
                }
                continue
            }
            let payload = Array(line[start...])
            let format: LocationDecoder.Format = String(decoding: payload, as: UTF8.self).contains(#""_type""#) ? .ownTracks : .plain
            do {
                if let fix = try decoder.decode(payload, device: device, format: format, arrival: 0) {
                    if fix.timestamp == 0 {
                        problems.append("line \(number + 1): no \"tst\"; a replayed fix needs its time")
                    } else {
                        fixes.append(fix)
                    }
                }
            } catch {
                problems.append("line \(number + 1): \(error.message)")
            }
        }
        return Track(fixes: fixes, problems: problems)
    }

    private static func gpx(_ bytes: [UInt8], device: String) throws(TrackError) -> Track {
        let reader = try GPXReader(bytes, device: device)
        guard reader.sawPoint else {
            throw TrackError("a GPX file without track points (trkpt, rtept or wpt)")
        }
        return Track(fixes: reader.fixes, problems: reader.problems)
    }
}
