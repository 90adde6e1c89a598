import CMicroHTTPD

/// A response body handed to libmicrohttpd where it is, without a copy: the answer (the
/// whole state, a couple of MB for a large fence book) is held once, as Swift bytes,
/// until libmicrohttpd is done with it, not once in Swift and once more in libmicrohttpd.
///
/// libmicrohttpd is given the address of the array's own storage
/// (`MHD_create_response_from_buffer_with_free_callback_cls`) and the box retained;
/// it releases the box when it destroys the response (sent whole, or the connection
/// closed). The array is a `let` the box alone owns a reference to for libmicrohttpd, so
/// its storage is neither freed nor moved (an array's storage moves only when it is
/// mutated) while libmicrohttpd reads it. With a libmicrohttpd older than 0.9.73 the
/// bytes are copied and the box released at once (`geotify_mhd_create_response_from_held_buffer`).
///
/// It carries the response's `lease` too, so the application's count of unsent answers
/// goes down when libmicrohttpd lets go of the bytes.
package final class HeldBody: Sendable {
    let bytes: [UInt8]
    let lease: (any AnyObject & Sendable)?

    init(_ bytes: [UInt8], lease: (any AnyObject & Sendable)?) {
        self.bytes = bytes
        self.lease = lease
    }

    /// Whether this libmicrohttpd sends the bytes where they are and lets go of them (and
    /// the lease) once sent; false with one older than 0.9.73, which copies them and lets
    /// go at once.
    package static var isSentInPlace: Bool { geotify_mhd_holds_buffers() }

    /// libmicrohttpd's response over `bytes`, keeping this box alive until libmicrohttpd
    /// destroys it; nil when libmicrohttpd cannot make one.
    func response() -> OpaquePointer? {
        let context = Unmanaged.passRetained(self).toOpaque()
        let release: MHD_ContentReaderFreeCallback = { cls in
            guard let cls else { return }
            Unmanaged<HeldBody>.fromOpaque(cls).release()
        }
        let made = bytes.withUnsafeBytes { buffer in
            geotify_mhd_create_response_from_held_buffer(buffer.count, buffer.baseAddress, release, context)
        }
        if made == nil { Unmanaged<HeldBody>.fromOpaque(context).release() }
        return made
    }
}
