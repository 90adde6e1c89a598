/// One message of a Server-Sent Events stream (the `text/event-stream` format browsers'
/// `EventSource` reads): an event name and its data, encoded as the WHATWG HTML standard
/// defines, one `data:` line per line of the data.
package struct ServerSentEvent: Sendable, Equatable {
    /// The event's name (`event:`); nil for the default `message`.
    package var name: String?
    package var data: String

    package init(name: String? = nil, data: String) {
        self.name = name
        self.data = data
    }

    /// The event as sent. Line breaks in the name are dropped (they would end the field):
    /// its scalars, since a `\r\n` is one `Character`, neither `\r` nor `\n`. Each line
    /// of the data becomes a `data:` line, so a browser reassembles it exactly.
    package var encoded: [UInt8] {
        var text = ""
        if let name {
            var kept = String.UnicodeScalarView()
            kept.append(contentsOf: name.unicodeScalars.filter { $0 != "\n" && $0 != "\r" })
            text += "event: " + String(kept) + "\n"
        }
        let lines = data.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        for line in lines {
            text += "data: " + line + "\n"
        }
        return Array((text + "\n").utf8)
    }

    /// A comment line: ignored by clients, it keeps proxies from closing an idle stream
    /// and finds clients that went away.
    package static let keepAlive: [UInt8] = Array(": keep-alive\n\n".utf8)

    /// The first bytes of every stream: how long a client waits before reconnecting, in
    /// milliseconds.
    package static func retry(milliseconds: Int) -> [UInt8] {
        Array("retry: \(milliseconds)\n\n".utf8)
    }
}
