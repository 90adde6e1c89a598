/// The limits every fence must respect, wherever it comes from (the file, the CLI or a
/// command): the app's 20-region cap and its radius clamp, made configurable.
public struct FenceLimits: Sendable, Equatable {
    /// The smallest radius in metres; smaller ones are raised to it.
    public var minimumRadius: Double
    /// The largest radius in metres; larger ones are lowered to it (the app's
    /// `maximumRegionMonitoringDistance`).
    public var maximumRadius: Double
    /// The most fences one device may have.
    public var maximumFencesPerDevice: Int

    public init(minimumRadius: Double = 1, maximumRadius: Double = 100_000, maximumFencesPerDevice: Int = 20) {
        self.minimumRadius = minimumRadius
        self.maximumRadius = maximumRadius
        self.maximumFencesPerDevice = maximumFencesPerDevice
    }

    /// `radius` clamped into the allowed range.
    public func clamp(radius: Double) -> Double {
        min(max(radius, minimumRadius), maximumRadius)
    }
}
