import CMosquitto

/// libmosquitto's process-wide set-up (`mosquitto_lib_init`), run exactly once, lazily,
/// before the first client is made. Swift initialises a global `let` once and
/// thread-safely, and the library is never cleaned up: clients may live until exit.
enum MosquittoLibrary {
    private static let initialisation: Int32 = mosquitto_lib_init()

    /// Makes sure `mosquitto_lib_init` has run; throws if it failed.
    static func ensureInitialised() throws(MQTTError) {
        try MQTTError.check("mosquitto_lib_init", initialisation)
    }
}
