/// A refusal of the fixture's commands, with the bridge's error code.
struct FixtureRefusal: Error {
    var code: String
    var message: String

    init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}
