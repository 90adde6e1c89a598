import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection to 127.0.0.1 that sends exactly the bytes a test writes and reads the
/// server's answer as it comes, for tests of HTTP servers with requests no polite client
/// sends (slow headers, lies about lengths, a thousand at once). Reads wait at most
/// `timeout` seconds each (a receive timeout on the socket), so a test never hangs.
package final class RawHTTPConnection {
    /// A response as read off the wire.
    package struct Response: Sendable {
        package var status: Int
        /// Header fields by lower-cased name.
        package var headers: [String: String]
        package var body: [UInt8]

        /// The body as text.
        package var text: String { String(decoding: body, as: UTF8.self) }
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`.
    package init(port: Int, timeout: Double = 10) throws {
        descriptor = try connectToLoopback(port: port, timeout: timeout)
        var wait = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
    }

    /// Writes `text` (as UTF-8) completely.
    package func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Writes `bytes` completely.
    package func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw TestSupportError("send failed: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    /// Reads more bytes into the buffer; false at the end of the stream (or on timeout).
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var count: Int
        repeat {
            count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        } while count < 0 && errno == EINTR
        guard count > 0 else { return false }
        buffer += chunk[..<count]
        return true
    }

    /// Reads one response: the status line, header fields and a body of `Content-Length`
    /// bytes, or chunked, or (with neither) up to the end of the stream; none for the
    /// answer to a HEAD request (`head`).
    package func readResponse(head: Bool = false) throws -> Response {
        let (status, headers) = try readHead()
        var body: [UInt8] = []
        if head {
            return Response(status: status, headers: headers, body: [])
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            while buffer.count < length {
                guard fill() else { throw TestSupportError("the body ended after \(buffer.count) of \(length) bytes") }
            }
            body = Array(buffer.prefix(length))
            buffer.removeFirst(length)
        } else if headers["transfer-encoding"]?.lowercased() == "chunked" {
            while true {
                let size = try readLine()
                guard let count = Int(size.split(separator: ";").first.map(String.init) ?? "", radix: 16) else {
                    throw TestSupportError("bad chunk size \(size)")
                }
                if count == 0 {
                    _ = try readLine()
                    break
                }
                while buffer.count < count + 2 {
                    guard fill() else { throw TestSupportError("a chunk ended early") }
                }
                body += buffer.prefix(count)
                buffer.removeFirst(count + 2)
            }
        } else if status != 204 && status != 304 {
            while fill() {}
            body = buffer
            buffer = []
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// Reads the header of a response whose body streams (Server-Sent Events), leaving
    /// the body to `read(until:)`.
    package func readStreamHeader() throws -> Response {
        let (status, headers) = try readHead()
        return Response(status: status, headers: headers, body: [])
    }

    /// Reads a status line and header fields (names lower-cased).
    private func readHead() throws -> (Int, [String: String]) {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while buffer.firstRange(of: separator) == nil {
            guard fill() else { throw TestSupportError("the connection ended before a response header (\(buffer.count) bytes)") }
        }
        let end = buffer.firstRange(of: separator)?.lowerBound ?? 0
        let lines = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeFirst(end + separator.count)
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw TestSupportError("not a status line: \(lines.first ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers)
    }

    /// Reads until the bytes read so far (raw, chunk framing included) contain `marker`'s
    /// UTF-8; returns them all as text, or nil when the stream ends or times out first.
    /// Each read's bytes are searched once (with the marker's length before them), not the
    /// whole buffer again: a stream of megabytes read in 64 KiB pieces took seconds of CPU.
    package func read(until marker: String) -> String? {
        let pattern = Array(marker.utf8)
        var searched = 0
        while true {
            let from = max(0, searched - pattern.count + 1)
            if buffer[from...].firstRange(of: pattern) != nil {
                let text = String(decoding: buffer, as: UTF8.self)
                buffer = []
                return text
            }
            searched = buffer.count
            guard fill() else { return nil }
        }
    }

    /// Whether the server closed the connection (reads until the end or the timeout;
    /// true only at the end).
    package func isClosedByServer() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
            buffer += chunk[..<count]
        }
    }

    private func readLine() throws -> String {
        let newline: [UInt8] = [13, 10]
        while buffer.firstRange(of: newline) == nil {
            guard fill() else { throw TestSupportError("the connection ended inside a chunk") }
        }
        let end = buffer.firstRange(of: newline)?.lowerBound ?? 0
        let line = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 2)
        return line
    }
}
