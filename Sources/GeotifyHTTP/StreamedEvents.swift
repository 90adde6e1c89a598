import Synchronization

/// The glue between one `EventSubscription` and libmicrohttpd's pull of response bytes:
/// copies pending bytes into the library's buffer, parks the connection when there are
/// none, and ends the response when the subscription closes.
final class StreamedEvents: Sendable {
    let subscription: EventSubscription
    let connection: ConnectionHandle
    private let finish = Mutex<(@Sendable () -> Void)?>(nil)

    init(subscription: EventSubscription, connection: ConnectionHandle) {
        self.subscription = subscription
        self.connection = connection
    }

    /// Called once the response is finished (the client left or the stream ended).
    var onFinish: (@Sendable () -> Void)? {
        get { finish.withLock { $0 } }
        set { finish.withLock { $0 = newValue } }
    }

    /// libmicrohttpd's content reader: bytes written, 0 after parking, -1 at the end.
    func read(into buffer: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        let connection = self.connection
        switch subscription.take(maximum: maximum, park: { connection.suspend() }, wake: { connection.resume() }) {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { raw in
                if let base = raw.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: raw.count) }
            }
            return bytes.count
        case .nothing:
            return 0
        case .end:
            return -1
        }
    }

    /// The response is gone: the subscription ends too.
    func finished() {
        subscription.close()
        onFinish?()
    }
}
