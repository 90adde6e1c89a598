/// A command line the bench cannot run: the reason (nil when help was asked for).
struct UsageProblem: Error {
    var message: String?
    init(_ message: String?) { self.message = message }
}
