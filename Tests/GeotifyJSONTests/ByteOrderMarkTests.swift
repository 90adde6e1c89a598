import Testing
@testable import GeotifyJSON

/// The UTF-8 byte order mark is dropped from the start of a text, all three of its bytes,
/// and only it: not a part of it, not U+FFFE, not one later in the text.
@Suite struct ByteOrderMarkTests {
    @Test func theMarkIsDroppedFromBytesWhole() {
        #expect(Array(ByteOrderMark.dropped(from: [0xEF, 0xBB, 0xBF, 0x61, 0x62])) == [0x61, 0x62])
        #expect(Array(ByteOrderMark.dropped(from: [0xEF, 0xBB, 0x61])) == [0xEF, 0xBB, 0x61], "part of a mark is text")
        #expect(Array(ByteOrderMark.dropped(from: [0x61, 0xEF, 0xBB, 0xBF])) == [0x61, 0xEF, 0xBB, 0xBF], "only at the start")
        #expect(ByteOrderMark.dropped(from: []).isEmpty)
    }

    @Test func theMarkIsDroppedFromText() {
        #expect(ByteOrderMark.dropped(from: "\u{FEFF}alice/phone secret") == "alice/phone secret")
        #expect(ByteOrderMark.dropped(from: "\u{FFFE}x") == "\u{FFFE}x", "U+FFFE is no mark")
        #expect(ByteOrderMark.dropped(from: "x\u{FEFF}") == "x\u{FEFF}")
    }
}
