import GeotifyTestSupport
import Testing
import GeotifyCore
import GeotifyBridge

@Suite("Location decoding")
struct LocationDecoderTests {
    let decoder = LocationDecoder(maximumPayloadBytes: 65_536)
    /// The same decoder without the flat-object scan: what the scan must agree with.
    var parserAlone: LocationDecoder {
        var parserAlone = decoder
        parserAlone.scansFlatObjects = false
        return parserAlone
    }

    func decode(_ text: String, _ format: LocationDecoder.Format = .ownTracks) throws(InputError) -> Fix? {
        try decoder.decode(Array(text.utf8), device: "alice/phone", format: format, arrival: 1_000)
    }

    func refusal(_ bytes: [UInt8], _ format: LocationDecoder.Format = .ownTracks) -> InputError? {
        do {
            _ = try decoder.decode(bytes, device: "alice/phone", format: format, arrival: 1_000)
            return nil
        } catch {
            return error
        }
    }

    @Test func anOwnTracksLocation() throws {
        let fix = try #require(try decode(#"{"_type":"location","lat":52.52,"lon":13.405,"acc":12,"tst":1700000000,"batt":80,"tid":"ap","conn":"w","inregions":["home"]}"#))
        #expect(fix == Fix(device: "alice/phone", coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: 12, timestamp: 1_700_000_000))
    }

    @Test func ownTracksLeavesOutZeroAccuracyAndTheArrivalTimeFillsAMissingTimestamp() throws {
        let fix = try #require(try decode(#"{"_type":"location","lat":1,"lon":2}"#))
        #expect(fix.accuracy == nil)
        #expect(fix.timestamp == 1_000)
    }

    /// The limits themselves are positions: the poles, the antimeridian from either
    /// side, an accuracy of 0 and the epoch.
    @Test func theRangesIncludeTheirLimits() throws {
        let plain = try #require(try decode(#"{"lat":90,"lon":180,"acc":0,"tst":0}"#, .plain))
        #expect(plain == Fix(device: "alice/phone", coordinate: Coordinate(latitude: 90, longitude: 180), accuracy: 0, timestamp: 0))
        let ownTracks = try #require(try decode(#"{"_type":"location","lat":-90,"lon":-180}"#))
        #expect(ownTracks.coordinate == Coordinate(latitude: -90, longitude: -180))
    }

    @Test func theArrivalTimeIsTakenInWholeSecondsSoEventIdsAreWhole() throws {
        let fix = try #require(try decoder.decode(
            Array(#"{"lat":1,"lon":2}"#.utf8), device: "alice/phone", format: .plain, arrival: 1_796_052_749.3634605))
        #expect(fix.timestamp == 1_796_052_749)
    }

    @Test(arguments: ["lwt", "transition", "waypoint", "waypoints", "card", "cmd", "beacon", "status"])
    func otherOwnTracksTypesAreIgnored(type: String) throws {
        #expect(try decode(#"{"_type":"\#(type)","tst":1,"lat":1,"lon":2}"#) == nil)
    }

    @Test func plainJSONWithAliases() throws {
        #expect(try decode(#"{"lat":1.5,"lon":-2.5,"acc":3,"tst":1700000000.25}"#, .plain)
                == Fix(device: "alice/phone", coordinate: Coordinate(latitude: 1.5, longitude: -2.5), accuracy: 3, timestamp: 1_700_000_000.25))
        #expect(try decode(#"{"latitude":1.5,"longitude":-2.5}"#, .plain)?.coordinate == Coordinate(latitude: 1.5, longitude: -2.5))
    }

    @Test(arguments: [
        (#"{"_type":"location","lat":52,"lon":13,"lat":-33}"#, LocationDecoder.Format.ownTracks,
         InputError(.duplicateField, #"the field "lat" is given more than once (line 1, column 39); give each field once"#)),
        (#"{"lat":52,"lon":13,"l\u0061t":-33}"#, .plain,
         InputError(.duplicateField, #"the field "lat" is given more than once (line 1, column 20); give each field once"#)),
        (#"{"_type":"location","batt":80,"lat":52,"lon":13,"batt":5}"#, .ownTracks,
         InputError(.duplicateField, #"the field "batt" is given more than once (line 1, column 49); give each field once"#)),
        (#"{"_type":"location","lat":52,"lon":13,"inregions":["home"],"inr\u0065gions":[]}"#, .ownTracks,
         InputError(.duplicateField, #"the field "inregions" is given more than once (line 1, column 60); give each field once"#)),
        (#"{"lat":52,"lon":13,"latitude":-33}"#, .plain,
         InputError(.duplicateField, #"both "lat" and "latitude" are given; they are one field: give one of them"#)),
        (#"{"latitude":52,"lon":13,"longitude":14}"#, .plain,
         InputError(.duplicateField, #"both "lon" and "longitude" are given; they are one field: give one of them"#)),
    ])
    func aFieldGivenTwiceIsRefused(payload: String, format: LocationDecoder.Format, expected: InputError) {
        #expect(refusal(Array(payload.utf8), format) == expected)
    }

    @Test func aNestedObjectMayRepeatTheNamesOfTheTopLevelAndManyFieldsStayLinear() throws {
        #expect(try decode(#"{"_type":"location","lat":1,"lon":2,"extra":{"lat":3,"lon":4}}"#)?.coordinate == Coordinate(latitude: 1, longitude: 2))
        let many = (0..<5_000).map { "\"f\($0)\":\($0)" }.joined(separator: ",")
        #expect(try decode(#"{"_type":"location","lat":1,"lon":2,\#(many)}"#) != nil)
        #expect(refusal(Array(#"{"_type":"location","lat":1,"lon":2,\#(many),"f4321":0}"#.utf8))?.message.hasPrefix(#"the field "f4321" is given more than once"#) == true)
    }

    @Test(arguments: [
        ("not json", InputError(.invalidJSON, "the payload is not JSON: line 1, column 1: unexpected character 'n', expected a JSON value")),
        (#"{"_type":"location","lon":13}"#, InputError(.missingField, "missing \"lat\"")),
        (#"{"_type":"location","lat":95,"lon":13}"#, InputError(.outOfRange, "lat 95 is outside -90...90")),
        (#"{"_type":"location","lat":52,"lon":"abc"}"#, InputError(.wrongType, "\"lon\" must be a number, not a string")),
        (#"{"_type":"location","lat":52,"lon":181}"#, InputError(.outOfRange, "lon 181 is outside -180...180")),
        (#"{"_type":"location","lat":52,"lon":13,"acc":-1}"#, InputError(.outOfRange, "acc -1 must not be negative")),
        (#"{"_type":"location","lat":52,"lon":13,"tst":"yesterday"}"#, InputError(.wrongType, "\"tst\" must be a number, not a string")),
        (#"{"lat":52,"lon":13}"#, InputError(.missingField, "an OwnTracks message needs \"_type\" (\"location\" for a position)")),
        (#"{"_type":5,"lat":52,"lon":13}"#, InputError(.wrongType, "\"_type\" must be a string, not a number")),
        (#"[52, 13]"#, InputError(.notAnObject, "the payload must be a JSON object, not an array")),
        (#"{"_type":"location","lat":52,"lon":13"#, InputError(.invalidJSON, "the payload is not JSON: line 1, column 38: unexpected end of text, expected ',' or '}'")),
    ])
    func badPayloadsGetASpecificError(payload: String, expected: InputError) {
        #expect(refusal(Array(payload.utf8)) == expected)
    }

    @Test func anEmptyPayload() {
        #expect(refusal([]) == InputError(.emptyPayload, "the payload is empty"))
    }

    @Test func aOneMebibytePayloadIsRefusedBeforeParsing() {
        let huge = Array(#"{"_type":"location","lat":1,"lon":2,"pad":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 1 << 20) + Array(#""}"#.utf8)
        #expect(refusal(huge) == InputError(.payloadTooLarge, "the payload is \(huge.count) bytes; at most 65536 are accepted"))
        #expect(refusal(Array(repeating: 0xFF, count: 1 << 20), .plain)?.code == .payloadTooLarge)
    }

    /// `maximumPayloadBytes` is the largest payload taken, not the first refused: a
    /// position of exactly that many bytes is read, one byte more is refused.
    @Test func aPayloadOfExactlyTheMaximumIsRead() throws {
        let position = Array(#"{"_type":"location","lat":1,"lon":2,"tst":10}"#.utf8)
        let padded = position.dropLast() + Array(repeating: UInt8(ascii: " "), count: 65_536 - position.count) + [UInt8(ascii: "}")]
        #expect(padded.count == 65_536)
        #expect(try decoder.decode(Array(padded), device: "alice/phone", format: .ownTracks, arrival: 1_000)?.coordinate
                == Coordinate(latitude: 1, longitude: 2))
        #expect(refusal(Array(padded) + [UInt8(ascii: " ")]) == InputError(.payloadTooLarge, "the payload is 65537 bytes; at most 65536 are accepted"))
    }

    /// What decoding `bytes` gives: the fix (nil when not a position) or the refusal.
    private func outcome(_ bytes: [UInt8], _ format: LocationDecoder.Format, decoder: LocationDecoder) -> Result<Fix?, InputError> {
        Result { () throws(InputError) -> Fix? in try decoder.decode(bytes, device: "alice/phone", format: format, arrival: 1_000.5) }
    }

    /// The flat-object scan (`FlatObjectScan`) reads most payloads before the parser
    /// would: it must decide exactly as the parser alone does, fix for fix and refusal for
    /// refusal, in both formats. Payloads changed at random around a position's shape.
    @Test func theScanDecidesAsTheParserAlone() {
        let payloads = [
            #"{"_type":"location","acc":12,"alt":40,"batt":71,"lat":52.520008,"lon":13.404954,"tid":"ph","tst":1700000000,"inregions":["home"]}"#,
            #"{"lat":52.520008,"lon":-13.4,"latitude":1,"acc":0,"tst":1700000000.25}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[]",:0123456789.eE+-truefalsnlocatidgpyx_\ "#.utf8) + [0x00, 0x0A, 0xFF, 0xC3]
        var generator = SplitMix64(seed: 23)
        var fixes = 0
        var refusals = 0
        for round in 0..<20_000 {
            let text = RandomEdits.edited(payloads[round % 2], alphabet: alphabet, maximum: 3, &generator)
            for format in [LocationDecoder.Format.ownTracks, .plain] {
                let scanned = outcome(text, format, decoder: decoder)
                let parsed = outcome(text, format, decoder: parserAlone)
                switch (scanned, parsed) {
                case (.success(let fix), .success(let expected)):
                    #expect(fix == expected, "\(String(decoding: text, as: UTF8.self))")
                    if fix != nil { fixes += 1 }
                case (.failure(let error), .failure(let expected)):
                    #expect(error == expected, "\(String(decoding: text, as: UTF8.self))")
                    refusals += 1
                default:
                    Issue.record("scan: \(scanned), parser: \(parsed), for \(String(decoding: text, as: UTF8.self))")
                }
            }
        }
        // Fixes and refusals both come many times over, in both formats.
        #expect(fixes > 4_000 && refusals > 4_000, "\(fixes) fixes, \(refusals) refusals of 40 000")
    }

    /// A payload cut anywhere (every prefix of two positions, one with spaces between its
    /// tokens, and of spaces alone): the quick scan answers as the parser does. (That
    /// neither reads past a cut's end, `FlatObjectScanTests` and `JSONParserTests` show.)
    @Test func aPayloadCutAnywhereIsDecidedAsTheParserAlone() {
        let payloads = [
            #"{"_type":"location","lat":52.5,"lon":13.4,"acc":12,"tst":1700000000,"inregions":["home","work"],"x":[1,true,null]}"#,
            #"{ "lat" : 52.5 , "lon" : -13.4 , "ok" : false , "list" : [ 1 , "a" , [ ] ] }"#,
            " ", "  \n",
        ].map { Array($0.utf8) }
        for payload in payloads {
            for end in 1...payload.count {
                let text = Array(payload[..<end])
                for format in [LocationDecoder.Format.ownTracks, .plain] {
                    let scanned = outcome(text, format, decoder: decoder)
                    let parsed = outcome(text, format, decoder: parserAlone)
                    #expect(scanned == parsed, "\(String(decoding: text, as: UTF8.self))")
                }
            }
        }
    }

    @Test func deeplyNestedGarbageIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 50_000)
        #expect(refusal(Array(deep.utf8))?.code == .invalidJSON)
    }
}
