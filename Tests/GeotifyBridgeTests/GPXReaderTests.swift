@testable import GeotifyBridge
import GeotifyCore
import Testing

/// The GPX reader of `geotify simulate`: real-world shapes, the accuracy rule, and hostile
/// documents (which must end in a specific error, never a crash, hang or expansion).
@Suite("GPX reader")
struct GPXReaderTests {
    func read(_ text: String) throws(TrackError) -> GPXReader {
        try GPXReader(Array(text.utf8), device: "alice/phone")
    }

    func error(_ text: String) -> String? {
        do {
            _ = try read(text)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func tracksRoutesAndWaypointsWithNamespacesCommentsAndCDATA() throws {
        let reader = try read("""
            \u{FEFF}<?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE gpx>
            <!-- recorded by a phone -->
            <gpx:gpx xmlns:gpx="http://www.topografix.com/GPX/1/1" version="1.1">
              <gpx:metadata><gpx:time>2000-01-01T00:00:00Z</gpx:time></gpx:metadata>
              <gpx:trk><gpx:name><![CDATA[<walk> & talk]]></gpx:name><gpx:trkseg>
                <gpx:trkpt lat='52.5' lon="13.4"><gpx:ele>34</gpx:ele><gpx:time> 2023-11-14T22:13:20Z </gpx:time><gpx:hdop>2.5</gpx:hdop></gpx:trkpt>
              </gpx:trkseg></gpx:trk>
              <rte><rtept lat="52.6" lon="13.5"><time>2023-11-14T23:13:20.250+01:00</time></rtept></rte>
              <wpt lat="-33.9" lon="151.2"><time>2023-11-14T22:13:21Z</time><extensions><time>1999-01-01T00:00:00Z</time></extensions></wpt>
            </gpx:gpx>
            """)
        #expect(reader.problems == [])
        #expect(reader.fixes.map(\.timestamp) == [1_700_000_000, 1_700_000_000.25, 1_700_000_001])
        #expect(reader.fixes.map(\.coordinate) == [
            Coordinate(latitude: 52.5, longitude: 13.4), Coordinate(latitude: 52.6, longitude: 13.5), Coordinate(latitude: -33.9, longitude: 151.2),
        ])
        #expect(reader.fixes.map(\.accuracy) == [12.5, nil, nil])
        #expect(reader.fixes.allSatisfy { $0.device == "alice/phone" })
    }

    @Test func pointsWithoutAPositionOrTimeAreProblemsAndACutOffFileKeepsItsPoints() throws {
        let reader = try read("""
            <gpx><trk><trkseg>
            <trkpt lat="95" lon="13"><time>2023-11-14T22:13:20Z</time></trkpt>
            <trkpt lat="52" lon="13"><time>yesterday</time></trkpt>
            <trkpt lat="52" lon="13"/>
            <trkpt lat="52" lon="13"><time>2023-11-14T22:13:20Z</time><hdop> </hdop></trkpt>
            <trkpt lat="52" lon="13"><time>2023-11-14T22:13:
            """)
        #expect(reader.fixes.count == 1)
        #expect(reader.fixes.first?.accuracy == nil)
        #expect(reader.problems == [
            "line 2: a trkpt without a valid lat and lon",
            "line 3: a trkpt without a readable time",
            "line 4: a trkpt without a readable time",
            "line 6: the file ends inside <time> (cut off?)",
        ])
    }

    @Test(arguments: [
        ("<gpx><trk></gpx>", "not a readable GPX file: line 1: </gpx> closes <trk> of line 1"),
        ("<gpx></gpx></gpx>", "not a readable GPX file: line 1: </gpx> closes nothing"),
        ("<gpx><!-- never closed", "not a readable GPX file: line 1: the file ends inside a comment"),
        ("<gpx\n lat=\"1", "not a readable GPX file: line 1: the file ends inside the attribute lat of <gpx>"),
        ("<gpx lat=1>", "not a readable GPX file: line 1: the attribute lat of <gpx> has no quoted value"),
        ("<gpx>&lol;</gpx>", "not a readable GPX file: line 1: unknown entity &lol;"),
        ("<gpx>fish & chips</gpx>", "not a readable GPX file: line 1: an '&' that starts no entity (write &amp;)"),
        ("<gpx>&#0;</gpx>", "not a readable GPX file: line 1: unknown entity &#0;"),
        ("<gpx>&#x110000;</gpx>", "not a readable GPX file: line 1: unknown entity &#x110000;"),
        ("<!DOCTYPE gpx [<!ENTITY lol \"lol\">]><gpx>&lol;</gpx>", "not a readable GPX file: line 1: a DOCTYPE with declarations is not read (GPX needs none)"),
        ("<gpx a=\"1\"b=\"2\">", "not a readable GPX file: line 1: unexpected character in the tag <gpx>"),
        ("< gpx>", "not a readable GPX file: line 1: a tag or attribute without a name"),
        ("<gpx a=\"<\">", "not a readable GPX file: line 1: '<' in the attribute a of <gpx>"),
    ])
    func malformedMarkupIsRefusedWithTheLine(text: String, expected: String) {
        #expect(error(text) == expected)
    }

    @Test func deepNestingIsRefusedNotRecursed() {
        let deep = String(repeating: "<a>", count: 100_000)
        #expect(error(deep) == "not a readable GPX file: line 1: elements nest deeper than 256")
    }

    /// `maximumDepth` is how deep elements may nest: a document exactly 256 deep is read,
    /// one element deeper is refused.
    @Test func nestingExactlyTheDepthLimitIsRead() {
        let limit = GPXReader.maximumDepth
        #expect(error(String(repeating: "<a>", count: limit) + String(repeating: "</a>", count: limit)) == nil)
        #expect(error(String(repeating: "<a>", count: limit + 1)) == "not a readable GPX file: line 1: elements nest deeper than 256")
    }

    /// The ends of the ranges are positions (the poles, the antimeridian from both sides);
    /// an `<hdop>` of 0 is a perfect fix (accuracy 0 m), not a missing one.
    @Test func theEndsOfTheRangesAndAnHDOPOfZero() throws {
        let reader = try read("""
            <gpx><trk><trkseg>
            <trkpt lat="90" lon="180"><time>2023-11-14T22:13:20Z</time><hdop>0</hdop></trkpt>
            <trkpt lat="-90" lon="-180"><time>2023-11-14T22:13:21Z</time></trkpt>
            <trkpt lat="90.000001" lon="0"><time>2023-11-14T22:13:22Z</time></trkpt>
            <trkpt lat="0" lon="-180.000001"><time>2023-11-14T22:13:23Z</time></trkpt>
            </trkseg></trk></gpx>
            """)
        #expect(reader.fixes.map(\.coordinate) == [Coordinate(latitude: 90, longitude: 180), Coordinate(latitude: -90, longitude: -180)])
        #expect(reader.fixes.map(\.accuracy) == [0, nil])
        #expect(reader.problems == ["line 4: a trkpt without a valid lat and lon", "line 5: a trkpt without a valid lat and lon"])
    }

    /// An `<hdop>` that is not a finite number from 0 makes its point a problem, not a
    /// perfect fix (as an OwnTracks `acc` out of range refuses the message); an empty one
    /// is no `<hdop>`, and the text in the problem is cut at 40 characters.
    @Test func anHDOPThatIsNotANumberFromZeroIsAProblem() throws {
        let long = String(repeating: "9", count: 39) + "xyz"
        let reader = try read("""
            <gpx>
            <wpt lat="1" lon="1"><time>2023-11-14T22:13:20Z</time><hdop>-1</hdop></wpt>
            <wpt lat="1" lon="1"><time>2023-11-14T22:13:20Z</time><hdop>inf</hdop></wpt>
            <wpt lat="1" lon="1"><time>2023-11-14T22:13:20Z</time><hdop>2,5</hdop></wpt>
            <wpt lat="1" lon="1"><time>2023-11-14T22:13:20Z</time><hdop>\(long)</hdop></wpt>
            <wpt lat="1" lon="1"><time>2023-11-14T22:13:20Z</time><hdop/></wpt>
            <wpt lat="1" lon="1"><time>2023-11-14T22:13:20Z</time><hdop> 1.5 </hdop></wpt>
            </gpx>
            """)
        #expect(reader.fixes.map(\.accuracy) == [nil, 7.5])
        #expect(reader.problems == [
            "line 2: a wpt whose <hdop> \"-1\" is not a number from 0",
            "line 3: a wpt whose <hdop> \"inf\" is not a number from 0",
            "line 4: a wpt whose <hdop> \"2,5\" is not a number from 0",
            "line 5: a wpt whose <hdop> \"\(long.prefix(40))\" is not a number from 0",
        ])
    }

    /// An empty `<time/>` is no time, and what an element nested deeper holds
    /// (`<extensions><time>`) is not the point's, also after it.
    @Test func anEmptyTimeElementLeavesThePointWithoutATime() throws {
        let reader = try read("""
            <gpx><wpt lat="52" lon="13"><time/><extensions><time>2023-11-14T22:13:20Z</time></extensions></wpt></gpx>
            """)
        #expect(reader.fixes.isEmpty)
        #expect(reader.problems == ["line 1: a wpt without a readable time"])
    }

    @Test func entitiesAndReferencesAreDecodedInTextAndAttributes() throws {
        var scanner = XMLScanner(Array(#"<a b="&lt;&#x41;&#66;&quot;">&amp;&apos;&gt;</a>"#.utf8))
        #expect(try scanner.next() == .start(name: "a", attributes: ["b": "<AB\""], selfClosing: false, line: 1))
        #expect(try scanner.next() == .text("&'>"))
        #expect(try scanner.next() == .end(name: "a", line: 1))
        #expect(try scanner.next() == nil)
    }

    @Test func hostileBytesNeverCrash() {
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("<>/=\"'&;#x![]-?: abc\n\u{0}".utf8) + [0xFF, 0xC3]
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0..<200, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? 0 }
            _ = try? GPXReader(bytes, device: "d")
        }
    }

    @Test(arguments: [
        ("2023-11-14T22:13:20Z", 1_700_000_000.0),
        ("2023-11-14t22:13:20z", 1_700_000_000.0),
        ("2023-11-14 22:13:20", 1_700_000_000.0),
        ("2023-11-14T23:13:20+01:00", 1_700_000_000.0),
        ("2023-11-14T21:43:20-00:30", 1_700_000_000.0),
        ("2023-11-14T22:13:20.5Z", 1_700_000_000.5),
        ("1970-01-01T00:00:00Z", 0.0),
        ("2000-02-29T00:00:00Z", 951_782_400.0),
        ("1969-12-31T23:59:59Z", -1.0),
        // A leap second is the next minute's first; 2000 and 2024 are leap years.
        ("2016-12-31T23:59:60Z", 1_483_228_800.0),
        ("2024-02-29T00:00:00Z", 1_709_164_800.0),
        ("2023-11-30T00:00:00Z", 1_701_302_400.0),
        ("2023-11-15T00:13:20+23:59", 1_699_920_860.0),
        // A decimal comma, and nine digits of a fraction (nanoseconds, as some loggers write).
        ("2023-11-14T22:13:20,5Z", 1_700_000_000.5),
        ("2023-11-14T22:13:20.250000000Z", 1_700_000_000.25),
        // XML Schema allows any number of digits; past the twelfth they add nothing.
        ("2023-11-14T22:13:20.2500000000000000Z", 1_700_000_000.25),
    ])
    func timesAreRead(text: String, seconds: Double) {
        #expect(GPXTime.seconds(text) == seconds)
    }

    @Test(arguments: ["", "2023-11-14", "2023-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2023-11-14T24:00:00Z", "2023-11-14T22:13:20.Z",
                      "2023-11-14T22:13:20+1:00", "2023-11-14T22:13:20Z junk", "２０２３-11-14T22:13:20Z", "yesterday",
                      "2023-11-14T22:60:00Z", "2023-11-14T22:13:61Z", "2023-11-14T22:13:20+24:00", "2023-11-14T22:13:20+00:60",
                      "1900-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2023-11-31T00:00:00Z", "2023-04-31T00:00:00Z"])
    func malformedTimesAreNot(text: String) {
        #expect(GPXTime.seconds(text) == nil)
    }
}
