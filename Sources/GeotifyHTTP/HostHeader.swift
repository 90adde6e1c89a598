import Foundation

/// The `Host` header rules of RFC 9112 §3.2, which a request meets before anything reads
/// its `Host`: an HTTP/1.1 request carries one `Host` line (an HTTP/1.0 request may carry
/// none), no request carries two, and the value is a `uri-host [ ":" port ]` (RFC 3986):
/// a bracketed IPv6 address, or a name or IPv4 address of letters, digits, `-._~`,
/// `!$&'()*+,;=` and `%XX` escapes, then optionally `:` and digits. Anything else is
/// refused with 400 `bad_host`.
///
/// libmicrohttpd 0.9.75 (not in its strict mode, which changes much else) checks none of
/// this: two `Host` lines reached the handlers as the last one, and an HTTP/1.1 request
/// without one was served. Two values, or one that is not a host, can be read one way
/// here and another way by a proxy or cache in front, so the request is refused before
/// the DNS-rebinding check (`HTTPApplication`, 421 `misdirected_host`) reads it. An empty
/// value is refused too: an `http` URI has a host (RFC 9110 §4.2.1). libmicrohttpd hands
/// values on as C strings, so a NUL byte ends one where it stands: what follows it is
/// seen neither here nor by the handlers.
package enum HostHeader {
    /// The refusal for a request of `version` (`HTTP/1.1`, as on its request line) whose
    /// `Host` lines carry `values` (every one, in the order sent), or nil when it may
    /// proceed.
    package static func refusal(values: [String], version: String) -> HTTPResponse? {
        guard let value = values.first else {
            return version == "HTTP/1.0" ? nil : .refusal(.badHost, "an \(version) request needs a Host header")
        }
        guard values.count == 1 else {
            return .refusal(.badHost, "the request has \(values.count) Host fields; send one")
        }
        // libmicrohttpd takes the spaces before a value off, not those after it, which are
        // not part of it either (RFC 9112 §5).
        let trimmed = value.trimmingSpaces
        guard isValid(trimmed) else {
            return .refusal(.badHost, "Host \"\(trimmed)\" is not a host name or address with an optional port")
        }
        return nil
    }

    /// Whether `value` is a `uri-host [ ":" port ]`.
    private static func isValid(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        let hostEnd: Int
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), isAddressLiteral(bytes[1..<close]) else { return false }
            hostEnd = close + 1
        } else {
            hostEnd = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.count
            guard hostEnd > 0, isName(bytes[..<hostEnd]) else { return false }
        }
        let port = bytes[hostEnd...]
        return port.isEmpty || (port.first == UInt8(ascii: ":") && port.dropFirst().allSatisfy(isDigit))
    }

    /// RFC 3986's `reg-name` (which takes in `IPv4address`): unreserved characters,
    /// sub-delimiters and `%` with two hexadecimal digits.
    private static func isName(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else { return false }
                index += 3
            } else {
                guard isUnreservedOrSubDelimiter(bytes[index]) else { return false }
                index += 1
            }
        }
        return true
    }

    /// What lies between `[` and `]`: an `IPv6address`, or an `IPvFuture`
    /// (`v` hexadecimal digits `.` then unreserved characters, sub-delimiters or `:`).
    private static func isAddressLiteral(_ bytes: ArraySlice<UInt8>) -> Bool {
        if let first = bytes.first, first == UInt8(ascii: "v") || first == UInt8(ascii: "V") {
            let rest = bytes.dropFirst()
            guard let dot = rest.firstIndex(of: UInt8(ascii: ".")) else { return false }
            let version = rest[..<dot]
            let text = rest[(dot + 1)...]
            return !version.isEmpty && version.allSatisfy(isHexDigit)
                && !text.isEmpty && text.allSatisfy { isUnreservedOrSubDelimiter($0) || $0 == UInt8(ascii: ":") }
        }
        // inet_pton reads exactly RFC 4291's text forms, which are RFC 3986's IPv6address.
        guard bytes.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return false }
        var address = in6_addr()
        return inet_pton(AF_INET6, String(decoding: bytes, as: UTF8.self), &address) == 1
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    /// RFC 3986's `unreserved` and `sub-delims`.
    private static func isUnreservedOrSubDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="): true
        default: false
        }
    }
}
