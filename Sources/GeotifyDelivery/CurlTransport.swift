import CCurl

/// Performs delivery requests with libcurl: HTTP(S) POSTs and SMTP(S) submissions, one
/// easy handle each, blocking the calling thread for at most the target's timeout.
///
/// libcurl is the field's standard client for both protocols (curl, git, PHP and most
/// language runtimes use it): TLS through OpenSSL with the system's CA store, proxies from
/// the environment, STARTTLS and SMTP AUTH, in one library Debian keeps patched.
package struct CurlTransport: DeliveryTransport {
    /// The most bytes of a response body kept; the rest is read and dropped.
    package static let maximumBody = 65_536

    package init() {}

    package func perform(_ request: DeliveryRequest, timeout: Double, caFile: String?) -> TransportResponse {
        guard let easy = CurlEasy(maximumBody: CurlTransport.maximumBody) else {
            return .failed(TransportFailure(permanent: false, reply: 0, message: "libcurl could not be set up"))
        }
        let milliseconds = Int(max(1, min(timeout, 86_400)) * 1000)
        easy.set(CURLOPT_TIMEOUT_MS, milliseconds)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, min(milliseconds, 10_000))
        if let caFile { easy.set(CURLOPT_CAINFO, caFile) }
        switch request {
        case .http(let http):
            easy.set(CURLOPT_URL, http.url)
            easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
            easy.set(CURLOPT_USERAGENT, "geotify")
            easy.setPostBody(http.body)
            // "Expect:" keeps libcurl from waiting for a 100 Continue before larger bodies.
            easy.set(CURLOPT_HTTPHEADER, list: http.headers.map { "\($0.name): \($0.value)" } + ["Expect:"])
            switch easy.perform() {
            case .success(let answer):
                return .http(status: answer.code, retryAfter: easy.responseHeader("Retry-After"), body: answer.body)
            case .failure(let failure):
                return .failed(CurlTransport.transportFailure(failure))
            }
        case .mail(let mail):
            easy.set(CURLOPT_URL, mail.url)
            easy.set(CURLOPT_PROTOCOLS_STR, "smtp,smtps")
            switch mail.security {
            case .startTLS: easy.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))
            case .implicitTLS, .none: break
            }
            if let username = mail.username { easy.set(CURLOPT_USERNAME, username) }
            if let password = mail.password { easy.set(CURLOPT_PASSWORD, password.value) }
            easy.set(CURLOPT_MAIL_FROM, "<\(mail.from)>")
            easy.set(CURLOPT_MAIL_RCPT, list: mail.recipients.map { "<\($0)>" })
            easy.setUpload(mail.data)
            switch easy.perform() {
            case .success(let answer):
                return .mail(reply: answer.code)
            case .failure(let failure):
                return .failed(CurlTransport.transportFailure(failure))
            }
        }
    }

    /// A libcurl failure as a transport failure: permanent when no retry can help (a
    /// malformed or unsupported URL, a refused login, a server without STARTTLS).
    static func transportFailure(_ failure: CurlFailure) -> TransportFailure {
        let permanent = [CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_LOGIN_DENIED, CURLE_USE_SSL_FAILED]
            .contains(failure.code)
        return TransportFailure(permanent: permanent, reply: failure.reply, message: failure.message)
    }
}
