import CMicroHTTPD

/// A libmicrohttpd connection, carried to the thread that answers a deferred request or
/// publishes an event.
///
/// The only call made on it from another thread is `MHD_resume_connection`, which
/// libmicrohttpd documents as safe from any thread; every other call happens in
/// libmicrohttpd's own callbacks. `Exchange` and `EventSubscription` guarantee that a
/// resume follows exactly one suspend (the undefined case is resuming a connection that
/// is not suspended).
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Parks the connection: libmicrohttpd stops polling it until `resume()`. Only from
    /// libmicrohttpd's callbacks.
    func suspend() {
        geotify_mhd_suspend_connection(pointer)
    }

    /// Wakes a parked connection; its callback runs again on libmicrohttpd's thread.
    func resume() {
        geotify_mhd_resume_connection(pointer)
    }
}
