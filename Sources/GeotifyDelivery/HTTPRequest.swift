/// An HTTP POST a target is sent: built by the target's destination (pure), performed by
/// the transport.
package struct HTTPRequest: Sendable, Equatable {
    /// One request header.
    package struct Header: Sendable, Equatable {
        package var name: String
        package var value: String

        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    package var url: String
    package var headers: [Header]
    package var body: [UInt8]

    package init(url: String, headers: [Header], body: [UInt8]) {
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The value of the header `name` (compared without letter case), if present.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// `text` made safe as a header value: bytes outside printable ASCII (line breaks,
    /// UTF-8) and `%` itself percent-encoded, so a device id can neither break the
    /// header nor change between attempts.
    package static func headerValue(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if byte >= 0x20 && byte < 0x7F && byte != 0x25 {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + Digest.hex([byte]).uppercased()
            }
        }
        return out
    }
}
