import CMicroHTTPD

/// A response body in memory of its own, which libmicrohttpd sends from where it is: a
/// large answer (the whole state, a couple of MB for a large fence book) is held once
/// while its client reads it, not once in Geotify and once more in libmicrohttpd.
///
/// The box allocates its memory itself and frees it when it goes, so the memory's address
/// is valid for as long as the box lives. libmicrohttpd is given that address
/// (`MHD_create_response_from_buffer_with_free_callback_cls`) with a retained hold on the
/// box and the response's lease, and lets go of both when it destroys the response (sent
/// whole, or the connection closed): the lease's owner learns the answer is done, and the
/// memory is freed unless the box is held elsewhere too. A Swift array's storage cannot
/// be lent so: the address `withUnsafeBytes` gives is defined only inside its closure.
///
/// A producer that can write its body straight into the box does (`init(count:writing:)`,
/// `HTTPResponse.Body.held`); bytes given as an array (`HTTPResponse.Body.bytes`, the JSON
/// answers) are copied into a box when the response is queued, and the array is let go
/// when queueing returns, so only the box's copy is held while the answer is sent. With a
/// libmicrohttpd older than 0.9.73 libmicrohttpd copies the bytes and the hold is let go
/// at once (`geotify_mhd_create_response_from_held_buffer`).
///
/// `@unchecked Sendable`: the memory is written only while the box is made.
package final class HeldBody: @unchecked Sendable {
    private let memory: UnsafeMutableRawBufferPointer

    /// A body of `count` bytes, all of them written by `write` into the box's memory.
    package init(count: Int, writing write: (UnsafeMutableRawBufferPointer) -> Void) {
        memory = .allocate(byteCount: count, alignment: 1)
        write(memory)
    }

    /// A body holding a copy of `bytes`.
    package convenience init(copying bytes: [UInt8]) {
        self.init(count: bytes.count) { memory in memory.copyBytes(from: bytes) }
    }

    deinit {
        memory.deallocate()
    }

    /// The box's memory, valid as long as the box lives.
    package var contents: UnsafeRawBufferPointer { UnsafeRawBufferPointer(memory) }

    /// The body's bytes, copied into an array.
    package var bytes: [UInt8] { Array(contents) }

    /// Whether this libmicrohttpd sends bodies from their boxes and lets go of them (and
    /// the responses' leases) once sent; false with one older than 0.9.73, which copies
    /// them and lets go at once.
    package static var isSentInPlace: Bool { geotify_mhd_holds_buffers() }

    /// libmicrohttpd's response over the box's memory, holding the box and `lease` until
    /// libmicrohttpd destroys it; nil when libmicrohttpd cannot make one.
    func response(holding lease: (any AnyObject & Sendable)?) -> OpaquePointer? {
        let hold = Unmanaged.passRetained(Hold(body: self, lease: lease)).toOpaque()
        let release: MHD_ContentReaderFreeCallback = { cls in
            guard let cls else { return }
            Unmanaged<Hold>.fromOpaque(cls).release()
        }
        let made = geotify_mhd_create_response_from_held_buffer(memory.count, memory.baseAddress, release, hold)
        if made == nil { Unmanaged<Hold>.fromOpaque(hold).release() }
        return made
    }

    /// What libmicrohttpd holds for one response: the body it reads and the response's
    /// lease.
    private final class Hold: Sendable {
        let body: HeldBody
        let lease: (any AnyObject & Sendable)?

        init(body: HeldBody, lease: (any AnyObject & Sendable)?) {
            self.body = body
            self.lease = lease
        }
    }
}
