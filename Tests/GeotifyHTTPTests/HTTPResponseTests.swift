import GeotifyHTTP
import Testing

/// What a response sends as its body, apart from the server that sends it.
@Suite struct HTTPResponseTests {
    /// A text answer ends in one line break: one is added when the text has none, and
    /// none when it has.
    @Test func aTextEndsInOneLineBreak() {
        #expect(HTTPResponse.text("ok").bytes == Array("ok\n".utf8))
        #expect(HTTPResponse.text("ok\n").bytes == Array("ok\n".utf8))
    }

    /// A body held in a box of its own reads as its bytes, as one given as an array does.
    @Test func aHeldBodyReadsAsItsBytes() {
        let held = HTTPResponse(status: 200, body: .held(HeldBody(copying: Array("held".utf8))))
        #expect(held.bytes == Array("held".utf8))
        #expect(HTTPResponse(status: 200, body: .bytes([1, 2])).bytes == [1, 2])
    }
}
