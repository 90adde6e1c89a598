import CBufferedSocket
import CSSL
import Foundation
import GeotifyTestSupport
import Testing

/// `CBufferedSocket`'s `SSL_write` on both ends of a real OpenSSL connection the test holds
/// itself (a socket pair, one thread, no broker): so the test decides when the turn's
/// writes are flushed, and can make OpenSSL want a write again with room left in the
/// plaintext buffer, which a broker-backed test cannot bring about at will.
@Suite("CBufferedSocket's SSL_write against OpenSSL itself")
struct BufferedSocketTLSWriteTests {
    /// Chunks of 4 000 bytes written and flushed one at a time (a turn each) while the
    /// other end reads nothing: once the kernel takes no more, a flush leaves its chunk
    /// with OpenSSL, which wants that write again with the same bytes (its manual). The
    /// next write is refused as "want write" although the plaintext buffer has room:
    /// gathered behind the wanted write, it would change what OpenSSL is passed again.
    /// Then the other end reads, the refused chunk is written again as libmosquitto would,
    /// and every byte arrives once, in order.
    @Test func aWriteWhileOpenSSLWantsItsLastAgainIsRefusedAndNothingIsLost() throws {
        let directory = try makeTemporaryDirectory("tls-socket")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try TestCertificates(in: directory)
        let connection = try Connection(certificates)
        defer { connection.close() }

        #expect(geotify_buffered_socket_attach(connection.client) == 0)
        #expect(geotify_buffered_socket_attach_tls(UnsafeMutableRawPointer(connection.clientSSL)) == 0)
        defer { geotify_buffered_socket_detach() }

        let chunk = { (number: Int) in [UInt8](repeating: UInt8(number % 251), count: 4_000) }
        var written = 0
        var refused: Int32?
        while written < 5_000 {
            let result = chunk(written).withUnsafeBytes { SSL_write(connection.clientSSL, $0.baseAddress, Int32($0.count)) }
            guard result > 0 else {
                refused = SSL_get_error(connection.clientSSL, result)
                break
            }
            written += 1
            _ = geotify_buffered_socket_flush()
        }
        #expect(refused == SSL_ERROR_WANT_WRITE, "a write was refused while the other end read nothing")
        // The socket's buffer (64 KiB) and at most the one chunk OpenSSL wants again: not
        // a plaintext buffer filled behind it.
        #expect(geotify_buffered_socket_unsent() <= 65_536 + 4_000, "\(geotify_buffered_socket_unsent()) bytes held")

        // The other end reads; the refused chunk goes again, then ten more, each flushed.
        let total = written + 11
        var received: [UInt8] = []
        var rounds = 0
        while (written < total || geotify_buffered_socket_unsent() > 0 || received.count < total * 4_000) && rounds < 100_000 {
            rounds += 1
            received += connection.serverRead()
            if written < total {
                let result = chunk(written).withUnsafeBytes { SSL_write(connection.clientSSL, $0.baseAddress, Int32($0.count)) }
                if result > 0 { written += 1 } else { #expect(SSL_get_error(connection.clientSSL, result) == SSL_ERROR_WANT_WRITE) }
            }
            _ = geotify_buffered_socket_flush()
        }
        #expect(received.count == total * 4_000)
        #expect(received == (0..<total).flatMap(chunk), "every byte once, in order")
    }

    /// Both ends of a TLS connection over a non-blocking socket pair, handshaken.
    final class Connection {
        let client: Int32
        let server: Int32
        let clientSSL: OpaquePointer
        let serverSSL: OpaquePointer
        private let contexts: [OpaquePointer]

        init(_ certificates: TestCertificates) throws {
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
            (client, server) = (ends[0], ends[1])
            for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
            let serverContext = try #require(SSL_CTX_new(TLS_server_method()))
            let clientContext = try #require(SSL_CTX_new(TLS_client_method()))
            contexts = [serverContext, clientContext]
            #expect(SSL_CTX_use_certificate_file(serverContext, certificates.certFile, SSL_FILETYPE_PEM) == 1)
            #expect(SSL_CTX_use_PrivateKey_file(serverContext, certificates.keyFile, SSL_FILETYPE_PEM) == 1)
            serverSSL = try #require(SSL_new(serverContext))
            clientSSL = try #require(SSL_new(clientContext))
            _ = SSL_set_fd(serverSSL, server)
            _ = SSL_set_fd(clientSSL, client)
            var (connected, accepted) = (false, false)
            for _ in 0..<10_000 where !(connected && accepted) {
                if !connected { connected = SSL_connect(clientSSL) == 1 }
                if !accepted { accepted = SSL_accept(serverSSL) == 1 }
            }
            try #require(connected && accepted, "the TLS handshake over the socket pair")
        }

        /// What the server end can read now.
        func serverRead() -> [UInt8] {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { SSL_read(serverSSL, $0.baseAddress, Int32($0.count)) }
                guard count > 0 else { return bytes }
                bytes += buffer.prefix(Int(count))
            }
        }

        func close() {
            SSL_free(clientSSL)
            SSL_free(serverSSL)
            contexts.forEach { SSL_CTX_free($0) }
            _ = Foundation.close(client)
            _ = Foundation.close(server)
        }
    }
}
