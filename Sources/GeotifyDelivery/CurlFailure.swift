import CCurl

/// A transfer libcurl could not complete: its code, the protocol's last reply code (0 when
/// none came), and its explanation.
struct CurlFailure: Error {
    var code: CURLcode
    var reply: Int
    var message: String
}
