import GeotifyHTTP
import Testing

@Suite struct RequestLimitsTests {
    let limits = RequestLimits(maximumBodyBytes: 1000)

    @Test func aBodyWithinTheLimitPasses() {
        #expect(limits.refusal(contentLength: "1000", transferEncoding: nil) == nil)
        #expect(limits.refusal(contentLength: nil, transferEncoding: nil) == nil)
        #expect(limits.refusal(contentLength: "0", transferEncoding: "identity") == nil)
    }

    @Test func anOversizedBodyIsRefusedWith413BeforeItIsRead() {
        let refusal = limits.refusal(contentLength: "1001", transferEncoding: nil)
        #expect(refusal?.status == 413)
        #expect(refusal?.refusalCode == "payload_too_large")
    }

    @Test func aChunkedBodyIsRefusedWith411() {
        let refusal = limits.refusal(contentLength: nil, transferEncoding: "chunked")
        #expect(refusal?.status == 411)
        #expect(refusal?.refusalCode == "length_required")
    }

    @Test func aContentLengthThatIsNotACountIsRefusedWith400() {
        #expect(limits.refusal(contentLength: "-5", transferEncoding: nil)?.status == 400)
        #expect(limits.refusal(contentLength: "ten", transferEncoding: nil)?.status == 400)
    }
}
