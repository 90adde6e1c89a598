/// The UTF-8 byte order mark (U+FEFF, the bytes EF BB BF) some editors (Windows Notepad,
/// PowerShell's `Out-File`) put at the start of a text file. It is no part of the text:
/// left on, it was the first scalar of the first line of an operator's line-based file,
/// so that line's name (an OwnTracks keys file's device, a users file's user) or the
/// secret of a one-line file silently no longer matched anything.
package enum ByteOrderMark {
    /// The mark's bytes.
    package static let bytes: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// `bytes` without a leading byte order mark.
    package static func dropped(from bytes: [UInt8]) -> ArraySlice<UInt8> {
        bytes.starts(with: Self.bytes) ? bytes.dropFirst(Self.bytes.count) : bytes[...]
    }

    /// `text` without a leading byte order mark.
    package static func dropped(from text: String) -> Substring {
        text.unicodeScalars.first == "\u{FEFF}" ? Substring(text.unicodeScalars.dropFirst()) : Substring(text)
    }
}
