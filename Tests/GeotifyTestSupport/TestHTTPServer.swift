import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 for tests of clients: it records every request
/// (method, path, headers, body) and answers what the test's `respond` returns, one
/// thread per connection, so a responder that takes its time holds up only its own
/// request. Bodies need a Content-Length; every answer closes the connection.
package final class TestHTTPServer: Sendable {
    /// A request as received.
    package struct Request: Sendable {
        package var method: String
        package var path: String
        /// Header names in lower case.
        package var headers: [String: String]
        package var body: [UInt8]

        /// The body as UTF-8 text.
        package var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// What to answer.
    package struct Response: Sendable {
        package var status: Int
        package var headers: [String: String]
        package var body: String

        package init(status: Int = 200, headers: [String: String] = [:], body: String = "") {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    package let port: Int
    private let listener: Int32
    private let received = Mutex<[Request]>([])
    private let respond: @Sendable (Request) -> Response

    /// Starts a server answering with `respond` (200 with an empty JSON object by default).
    package init(respond: @escaping @Sendable (Request) -> Response = { _ in Response(body: "{}") }) throws {
        self.respond = respond
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestSupportError("socket() failed: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw TestSupportError("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// `http://127.0.0.1:<port>`.
    package var url: String { "http://127.0.0.1:\(port)" }

    /// The requests received so far, in order of arrival.
    package var requests: [Request] { received.withLock { $0 } }

    /// Stops accepting connections (and lets the server go: its accept loop holds it).
    package func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        guard let request = read(connection) else { return }
        received.withLock { $0.append(request) }
        let response = respond(request)
        var head = "HTTP/1.1 \(response.status) \(response.status < 400 ? "OK" : "Error")\r\n"
        let body = Array(response.body.utf8)
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            sent += written
        }
    }

    /// Reads one request: the head up to the blank line, then Content-Length bytes.
    private func read(_ connection: Int32) -> Request? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var headEnd: Int?
        var expected = 0
        var request: Request?
        while true {
            if let headEnd, buffer.count >= headEnd + expected {
                request?.body = Array(buffer[headEnd..<headEnd + expected])
                return request
            }
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer += chunk[0..<count]
            if headEnd == nil, let end = buffer.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
                headEnd = end
                let lines = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
                let requestLine = lines[0].split(separator: " ")
                guard requestLine.count == 3 else { return nil }
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                expected = Int(headers["content-length"] ?? "0") ?? 0
                request = Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, body: [])
            }
        }
    }
}
