import Foundation
import GeotifyBridge
import GeotifyCore

/// Payload decoding: OwnTracks location messages turned into `Fix`es by
/// `LocationDecoder`, beside Foundation's `JSONSerialization` reading the same bytes
/// into the same fields.
struct DecodeScenario {
    let options: BenchOptions

    func run() -> [ResultRow] {
        var random = SeededRandom(seed: options.seed &+ 2)
        let places = Places(count: 200, random: &random)
        let walkers = (0..<1_000).map { _ in Walker(home: places.randomTown(&random), range: 3_000, &random) }
        let stream = FixStream(walkers: walkers, steps: 10, &random)
        let payloads = (0..<stream.count).map { number in
            let fix = stream.fix(number)
            return OwnTracksPayloads.location(fix.coordinate, accuracy: fix.accuracy, timestamp: fix.timestamp, variant: number)
        }
        let averageBytes = payloads.reduce(0) { $0 + $1.count } / payloads.count
        Progress.note("decode: \(payloads.count) OwnTracks payloads, \(averageBytes) bytes on average")

        let decoder = LocationDecoder()
        var decoded = 0
        let geotify = Throughput.measure(seconds: options.budget, chunk: 1_000) { first, count in
            for number in first..<(first + count) {
                let payload = payloads[number % payloads.count]
                if let fix = try? decoder.decode(payload, device: "u1/phone", format: .ownTracks, arrival: 0), fix.accuracy != nil {
                    decoded += 1
                }
            }
        }
        var foundationDecoded = 0
        let foundation = Throughput.measure(seconds: options.budget, chunk: 1_000) { first, count in
            for number in first..<(first + count) {
                if let fix = DecodeScenario.foundationDecode(payloads[number % payloads.count], device: "u1/phone", arrival: 0),
                   fix.accuracy != nil {
                    foundationDecoded += 1
                }
            }
        }
        let allDecoded = decoded > 0 && foundationDecoded > 0
        return [ResultRow(
            scenario: "decode", measure: "OwnTracks location payload → Fix (LocationDecoder)",
            value: geotify.perSecond, unit: .perSecond,
            baseline: foundation.perSecond, baselineName: "JSONSerialization",
            detail: "\(ResultRow.format(geotify.nanosecondsPerItem, .nanoseconds))/message, \(averageBytes) B payloads (all app fields)\(allDecoded ? "" : "; DECODING FAILED")")]
    }

    /// The baseline: the same fields read with `JSONSerialization`.
    static func foundationDecode(_ payload: [UInt8], device: String, arrival: Double) -> Fix? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any],
              object["_type"] as? String == "location",
              let latitude = (object["lat"] as? NSNumber)?.doubleValue,
              let longitude = (object["lon"] as? NSNumber)?.doubleValue
        else { return nil }
        return Fix(
            device: device, coordinate: Coordinate(latitude: latitude, longitude: longitude),
            accuracy: (object["acc"] as? NSNumber)?.doubleValue,
            timestamp: (object["tst"] as? NSNumber)?.doubleValue ?? arrival)
    }
}
