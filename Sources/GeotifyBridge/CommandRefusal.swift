import GeotifyStore

/// Why a command was refused: the code and message its reply carries.
struct CommandRefusal: Error {
    var code: String
    var message: String

    init(_ error: FenceChangeError) {
        code = error.code.rawValue
        message = error.message
    }

    init(_ error: InputError) {
        code = error.kind.rawValue
        message = error.message
    }
}
