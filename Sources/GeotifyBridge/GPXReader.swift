import Foundation
import GeotifyCore

/// The points of a GPX document as fixes of one device: `trkpt`, `rtept` and `wpt`,
/// each with `lat` and `lon`, its `<time>` and, when given, its `<hdop>`. Read with
/// `XMLScanner`, so no XML library is linked.
///
/// GPX has no accuracy in metres; `<hdop>` (horizontal dilution of precision) scales the
/// receiver's own error, so the accuracy is taken as `hdop × metresPerHDOP`. A point
/// without `<hdop>` (or with an empty one) has no accuracy and counts as accurate, as an
/// OwnTracks fix without `acc` does. A point without a valid position or time, or with an
/// `<hdop>` that is not a finite number from 0, is a problem, not a fix: as an OwnTracks
/// `acc` out of its range refuses the message, a nonsense accuracy must not pass as
/// perfect.
struct GPXReader {
    /// Metres of accuracy per unit of HDOP: a typical consumer receiver's error at HDOP 1.
    static let metresPerHDOP = 5.0
    /// Elements may nest at most this deep.
    static let maximumDepth = 256

    private(set) var fixes: [Fix] = []
    private(set) var problems: [String] = []
    /// Whether the document had any point at all, usable or not.
    private(set) var sawPoint = false

    /// Reads every point of `bytes` as a fix of `device`.
    init(_ bytes: [UInt8], device: String) throws(TrackError) {
        var scanner = XMLScanner(bytes)
        var open: [(name: String, line: Int)] = []
        var point: (name: String, depth: Int, line: Int, coordinate: Coordinate?)?
        var field: (name: String, text: String)?
        var time: Double?
        var hdop: HDOP?
        while let event = try scanner.next() {
            switch event {
            case .start(let name, let attributes, let selfClosing, let line):
                guard open.count < Self.maximumDepth else {
                    throw TrackError("not a readable GPX file: line \(line): elements nest deeper than \(Self.maximumDepth)")
                }
                if point == nil, ["trkpt", "rtept", "wpt"].contains(name) {
                    sawPoint = true
                    point = (name, open.count, line, Self.coordinate(attributes))
                    if point?.coordinate == nil { problems.append("line \(line): a \(name) without a valid lat and lon") }
                    (time, hdop) = (nil, nil)
                } else if let point, open.count == point.depth + 1, name == "time" || name == "hdop" {
                    field = (name, "")
                }
                if selfClosing {
                    field = nil
                    if let ended = point, ended.depth == open.count {
                        finish(ended, time: time, hdop: hdop, device: device)
                        point = nil
                    }
                } else {
                    open.append((name, line))
                }
            case .text(let text):
                if var current = field, current.text.utf8.count < 64 {
                    current.text += text
                    field = current
                }
            case .end(let name, let line):
                guard let last = open.popLast() else {
                    throw TrackError("not a readable GPX file: line \(line): </\(name)> closes nothing")
                }
                guard last.name == name else {
                    throw TrackError("not a readable GPX file: line \(line): </\(name)> closes <\(last.name)> of line \(last.line)")
                }
                if let (fieldName, text) = field, fieldName == name {
                    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    if fieldName == "time" {
                        time = GPXTime.seconds(trimmed)
                    } else {
                        hdop = trimmed.isEmpty ? nil : Self.number(trimmed).flatMap { $0 >= 0 ? .metres($0 * Self.metresPerHDOP) : nil }
                            ?? .unreadable(trimmed)
                    }
                    field = nil
                }
                if let ended = point, ended.depth == open.count {
                    finish(ended, time: time, hdop: hdop, device: device)
                    point = nil
                }
            }
        }
        if let last = open.last {
            problems.append("line \(last.line): the file ends inside <\(last.name)> (cut off?)")
        }
    }

    /// A point's `<hdop>`: the accuracy it gives, or the text that is not one.
    private enum HDOP {
        case metres(Double)
        case unreadable(String)
    }

    /// Turns a point that ended into a fix, or a problem when it has no usable time or
    /// accuracy.
    private mutating func finish(
        _ point: (name: String, depth: Int, line: Int, coordinate: Coordinate?), time: Double?, hdop: HDOP?, device: String
    ) {
        guard let coordinate = point.coordinate else { return }
        guard let time else {
            problems.append("line \(point.line): a \(point.name) without a readable time")
            return
        }
        var accuracy: Double?
        switch hdop {
        case nil: accuracy = nil
        case .metres(let metres): accuracy = metres
        case .unreadable(let text):
            problems.append("line \(point.line): a \(point.name) whose <hdop> \"\(text.prefix(40))\" is not a number from 0")
            return
        }
        fixes.append(Fix(device: device, coordinate: coordinate, accuracy: accuracy, timestamp: time))
    }

    private static func coordinate(_ attributes: [String: String]) -> Coordinate? {
        guard let latitude = attributes["lat"].flatMap(Self.number), let longitude = attributes["lon"].flatMap(Self.number),
              (-90...90).contains(latitude), (-180...180).contains(longitude)
        else { return nil }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    private static func number(_ text: String) -> Double? {
        Double(text.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil }
    }
}
