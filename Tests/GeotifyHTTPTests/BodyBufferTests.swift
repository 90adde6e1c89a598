import GeotifyHTTP
import Testing

@Suite struct BodyBufferTests {
    @Test func aBodyUpToTheMaximumIsKept() {
        var body = BodyBuffer(maximum: 10)
        let first = body.append(Array("hello".utf8))
        let second = body.append(Array("world".utf8))
        #expect(first && second)
        #expect(body.bytes == Array("helloworld".utf8))
        #expect(!body.overflowed)
    }

    /// However the body is framed, no more than the maximum is ever stored.
    @Test func aBodyPastTheMaximumIsRefusedAndNothingMoreIsKept() {
        var body = BodyBuffer(maximum: 10)
        let within = body.append(Array("hello".utf8))
        let past = body.append(Array("world!".utf8))
        let after = body.append(Array("x".utf8))
        #expect(within)
        #expect(!past)
        #expect(!after, "stays refused")
        #expect(body.overflowed)
        #expect(body.bytes.isEmpty)
    }
}
