/// The decoding of `%HH` escapes in a request's path and query arguments, which
/// libmicrohttpd leaves to the server (`MHD_OPTION_UNESCAPE_CALLBACK`) so that the server
/// learns when one decodes to a control character.
///
/// libmicrohttpd decodes in place, in the request's own C strings, and hands the path and
/// the arguments on as C strings, which end at a decoded `%00`: `POST /api/cmd/alice/phone%00x`
/// ran the command for `alice/phone`, `GET /api/fences.geojson%00.html` was the export, and
/// `?mode=replace%00x` was `replace`. Its rule is kept (a `%` and two hex digits are that
/// byte, any other `%` stays as it is; `+` in an argument became a space before this), and
/// the result names what is wrong with the text, decoded or sent raw: an ASCII control
/// character (U+0000–U+001F or U+007F), or bytes that are not UTF-8 (`%FF`, `%C0%AF`, a
/// lone `%ED%A0%80`), which Swift's `String` turned into U+FFFD, so that `%FF` and `%FE`
/// named the same device. The server refuses either 400 `bad_uri` before any route sees
/// it (`HTTPServer`). No name the routes take holds one (a device's MQTT topic levels, a
/// fence id, a file: MQTT topics are UTF-8 and hold no control character), and a NUL
/// would cut the name short.
package enum PercentDecoding {
    /// What makes a decoded path or argument unfit for any route.
    package enum Flaw: Sendable, Equatable {
        case controlCharacter
        case notUTF8
    }

    /// Decodes the escapes in `bytes` in place, front to back (the result is never
    /// longer); returns the decoded length and its flaw, if any (a control character
    /// before a UTF-8 error).
    package static func decode(_ bytes: UnsafeMutableBufferPointer<UInt8>) -> (count: Int, flaw: Flaw?) {
        var read = 0
        var written = 0
        var control = false
        var beyondASCII = false
        while read < bytes.count {
            var byte = bytes[read]
            if byte == UInt8(ascii: "%"), read + 2 < bytes.count, let high = hexValue(bytes[read + 1]), let low = hexValue(bytes[read + 2]) {
                byte = high << 4 | low
                read += 3
            } else {
                read += 1
            }
            control = control || byte < 0x20 || byte == 0x7F
            beyondASCII = beyondASCII || byte >= 0x80
            bytes[written] = byte
            written += 1
        }
        if control { return (written, .controlCharacter) }
        // The standard library's validation refuses overlong forms, surrogates and bytes
        // past U+10FFFF; it runs only when a byte is beyond ASCII.
        if beyondASCII && String(validating: bytes[..<written], as: UTF8.self) == nil { return (written, .notUTF8) }
        return (written, nil)
    }

    /// The value of a hex digit, either case; nil for any other byte.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
