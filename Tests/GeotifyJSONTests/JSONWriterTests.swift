import Testing
import GeotifyJSON

@Suite("JSON writer")
struct JSONWriterTests {
    @Test func compactOutputKeepsMemberOrder() {
        let value: JSON = ["device": "alice/phone", "badge": 3, "lat": 52.52, "acc": nil, "ok": true]
        #expect(JSONWriter().string(value) == #"{"device":"alice/phone","badge":3,"lat":52.52,"acc":null,"ok":true}"#)
    }

    @Test func prettySortedOutputIsStable() {
        let value: JSON = ["b": [1, 2], "a": ["z": 1.5, "y": [], "x": [:]]]
        let text = JSONWriter(pretty: true, sortedKeys: true).string(value)
        #expect(text == """
            {
              "a": {
                "x": {},
                "y": [],
                "z": 1.5
              },
              "b": [
                1,
                2
              ]
            }

            """)
    }

    @Test func escapesWhatJSONRequires() {
        #expect(JSONWriter().string("a\"b\\c\n\u{01}é") == #""a\"b\\c\n\u0001é""#)
    }

    @Test func numbersRoundTrip() throws {
        for number in [0.1, -13.405, 52.520008, 1e-7, 1_700_000_000, 1e300, -0.0, 123456789.125] {
            let text = JSONWriter().string(.number(number))
            #expect(try JSONParser().parse(text).numberValue == number, "\(text)")
        }
        #expect(JSONWriter().string(.number(.nan)) == "null")
    }

    @Test func parseWriteParseIsIdentity() throws {
        let text = #"{"devices":{"alice/phone":[{"identifier":"home","latitude":52.52,"note":"Welcome \"home\""}]}}"#
        let value = try JSONParser().parse(text)
        #expect(try JSONParser().parse(JSONWriter(pretty: true).string(value)) == value)
        #expect(JSONWriter().string(value) == text)
    }
}
