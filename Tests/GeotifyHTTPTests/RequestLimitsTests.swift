import GeotifyHTTP
import Testing

@Suite struct RequestLimitsTests {
    let limits = RequestLimits(maximumBodyBytes: 1000)

    @Test func aBodyWithinTheLimitPasses() {
        #expect(limits.refusal(contentLengths: ["1000"], transferEncodings: []) == nil)
        #expect(limits.refusal(contentLengths: [], transferEncodings: []) == nil)
    }

    @Test func anOversizedBodyIsRefusedWith413BeforeItIsRead() {
        let refusal = limits.refusal(contentLengths: ["1001"], transferEncodings: [])
        #expect(refusal?.status == 413)
        #expect(refusal?.refusalCode == .http(.payloadTooLarge))
    }

    @Test func aChunkedBodyIsRefusedWith411() {
        let refusal = limits.refusal(contentLengths: [], transferEncodings: ["chunked"])
        #expect(refusal?.status == 411)
        #expect(refusal?.refusalCode == .http(.lengthRequired))
    }

    @Test func aContentLengthThatIsNotACountIsRefusedWith400() {
        #expect(limits.refusal(contentLengths: ["-5"], transferEncodings: [])?.status == 400)
        #expect(limits.refusal(contentLengths: ["ten"], transferEncodings: [])?.status == 400)
    }

    /// libmicrohttpd reads a body by the first copy of a field; a check of any one copy
    /// could be told a different size.
    @Test func aRepeatedContentLengthOrTransferEncodingIsRefusedWith400() {
        let lengths = limits.refusal(contentLengths: ["5000000", "5"], transferEncodings: [])
        let same = limits.refusal(contentLengths: ["5", "5"], transferEncodings: [])
        let encodings = limits.refusal(contentLengths: [], transferEncodings: ["chunked", "identity"])
        #expect(lengths?.status == 400)
        #expect(lengths?.refusalCode == .http(.badRequest))
        #expect(same?.status == 400)
        #expect(encodings?.status == 400)
        #expect(encodings?.refusalCode == .http(.badRequest))
    }

    /// With a coding it does not decode, libmicrohttpd reads the body until the connection
    /// closes, whatever `Content-Length` says.
    @Test func aTransferEncodingOtherThanChunkedIsRefusedWith400() {
        for coding in ["identity", "gzip", "gzip, chunked"] {
            let refusal = limits.refusal(contentLengths: ["5"], transferEncodings: [coding])
            #expect(refusal?.status == 400, "\(coding)")
            #expect(refusal?.refusalCode == .http(.badRequest))
        }
    }
}
