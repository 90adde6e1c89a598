import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import GeotifyCore

/// A recorded track of one device, read from a file for offline replay (`geotify
/// simulate`): OwnTracks location messages one a line (as the OwnTracks Recorder
/// stores them: anything before the first `{` on a line, such as its timestamp
/// columns, is skipped), plain JSON positions one a line, or GPX (`trkpt`, `rtept`
/// and `wpt` with `time`; GPX carries no accuracy).
public struct Track: Sendable {
    /// The fixes in file order.
    public var fixes: [Fix]
    /// Lines that were not positions, with why (line number: reason); non-location
    /// OwnTracks messages are skipped silently.
    public var problems: [String]

    /// Reads a track for `device` from `bytes`.
    public init(parsing bytes: [UInt8], device: String, decoder: LocationDecoder = LocationDecoder()) throws(TrackError) {
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
        let reader = GPXReader(device: device)
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = reader
        guard parser.parse() else {
            throw TrackError("not a readable GPX file: \(parser.parserError.map { "\($0.localizedDescription) at line \(parser.lineNumber)" } ?? "unknown XML error")")
        }
        guard !reader.fixes.isEmpty || !reader.problems.isEmpty else {
            throw TrackError("a GPX file without track points (trkpt, rtept or wpt)")
        }
        return Track(fixes: reader.fixes, problems: reader.problems)
    }
}

/// Collects the points of a GPX document as it is parsed.
private final class GPXReader: NSObject, XMLParserDelegate {
    let device: String
    var fixes: [Fix] = []
    var problems: [String] = []
    private var point: Coordinate?
    private var pointLine = 0
    private var text = ""
    private var time: Double?
    private let formatter = ISO8601DateFormatter()
    private let fractionalFormatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    init(device: String) {
        self.device = device
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        text = ""
        guard ["trkpt", "rtept", "wpt"].contains(name) else { return }
        pointLine = parser.lineNumber
        time = nil
        guard let latitude = attributes["lat"].flatMap(Double.init), let longitude = attributes["lon"].flatMap(Double.init),
              (-90...90).contains(latitude), (-180...180).contains(longitude)
        else {
            point = nil
            problems.append("line \(pointLine): a \(name) without a valid lat and lon")
            return
        }
        point = Coordinate(latitude: latitude, longitude: longitude)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "time" {
            let written = text.trimmingCharacters(in: .whitespacesAndNewlines)
            time = (formatter.date(from: written) ?? fractionalFormatter.date(from: written))?.timeIntervalSince1970
        } else if ["trkpt", "rtept", "wpt"].contains(name), let point {
            if let time {
                fixes.append(Fix(device: device, coordinate: point, accuracy: nil, timestamp: time))
            } else {
                problems.append("line \(pointLine): a point without a readable time")
            }
            self.point = nil
        }
    }
}
