/// How hard a target may be driven: attempts under way at once, and a rate limit.
package struct TargetLimits: Sendable, Equatable {
    /// Attempts under way at once; Pushover asks for no more than 2.
    package var concurrency = 2
    package var rate: RateLimit?

    package init(concurrency: Int = 2, rate: RateLimit? = nil) {
        self.concurrency = concurrency
        self.rate = rate
    }
}
