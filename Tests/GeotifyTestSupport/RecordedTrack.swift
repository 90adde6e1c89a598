import Foundation

/// A deterministic, recorded-style track for replay tests: a phone lying still near the
/// edge of a fence for an hour with realistic GPS jitter (and now and then a coarse
/// cell-tower fix far off), then a walk out of the fence and back in.
///
/// Each fix's scatter follows its reported accuracy (an accuracy of `acc` metres with
/// about 2σ of scatter), as phone fixes do.
package struct RecordedTrack: Sendable {
    /// One position report.
    package struct Point: Sendable {
        package var latitude: Double
        package var longitude: Double
        package var accuracy: Double
        package var timestamp: Double
    }

    /// The fence the track is recorded around: centre and radius.
    package static let center = (latitude: 52.52, longitude: 13.405)
    package static let radius = 100.0

    package let points: [Point]

    /// The track, starting at `start` (unix seconds), one fix every 30 s.
    package init(start: Double = 1_700_000_000, seed: UInt64 = 7) {
        var random = SplitMix64(seed: seed)
        var points: [Point] = []
        var time = start
        func add(north: Double, east: Double, accuracy: Double, jitter: Bool = true) {
            var north = north
            var east = east
            if jitter {
                north += random.gaussian() * accuracy / 2
                east += random.gaussian() * accuracy / 2
            }
            points.append(Point(
                latitude: RecordedTrack.center.latitude + north / 111_250,
                longitude: RecordedTrack.center.longitude + east / (111_250 * cos(RecordedTrack.center.latitude * .pi / 180)),
                accuracy: accuracy, timestamp: time))
            time += 30
        }
        for index in 0..<120 {
            if index % 40 == 17 {
                add(north: -900, east: 1_400, accuracy: 1_500, jitter: false)
            } else {
                add(north: 92, east: 0, accuracy: 15 + random.unit() * 15)
            }
        }
        for step in 1...20 { add(north: 92 + Double(step) * 25, east: 0, accuracy: 8 + random.unit() * 4) }
        for step in 1...24 { add(north: 592 - Double(step) * 25, east: 0, accuracy: 8 + random.unit() * 4) }
        self.points = points
    }

    /// The track as OwnTracks location messages, one JSON object a line.
    package var ownTracksLines: String {
        points.map { point in
            #"{"_type":"location","lat":\#(point.latitude),"lon":\#(point.longitude),"acc":\#(Int(point.accuracy.rounded())),"tst":\#(Int(point.timestamp)),"tid":"ap"}"#
        }.joined(separator: "\n") + "\n"
    }
}

/// A small deterministic generator (SplitMix64) for reproducible random test data, so
/// a failing sample reproduces on every run.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    package mutating func unit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }

    /// Standard normal (Box–Muller).
    package mutating func gaussian() -> Double {
        let u = max(unit(), 1e-12)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * unit())
    }
}
