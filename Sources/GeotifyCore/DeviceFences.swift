/// The fences one device is evaluated against: its own (at most a few dozen, checked
/// one by one) and the shared sets that apply to it (found through their indexes).
/// Identifiers are unique across them; the fence file refuses clashes.
public struct DeviceFences: Sendable {
    public var own: [Fence]
    public var shared: [SharedFences]

    public init(own: [Fence] = [], shared: [SharedFences] = []) {
        self.own = own
        self.shared = shared
    }

    /// The fence `identifier`, own or shared.
    @inlinable
    public func fence(_ identifier: String) -> Fence? {
        if let fence = own.first(where: { $0.identifier == identifier }) { return fence }
        for set in shared {
            if let fence = set.fence(identifier) { return fence }
        }
        return nil
    }

    /// The shared set a fence belongs to, nil for the device's own fences.
    public func owner(of identifier: String) -> SharedFences? {
        shared.first { $0.position(of: identifier) != nil }
    }

    /// Every fence whose bounding box contains `point`: all own fences that do, and the
    /// shared candidates from the indexes.
    @inlinable
    public func forEachCandidate(containing point: Coordinate, _ body: (Fence) -> Void) {
        for fence in own where fence.boundingBox.contains(point) { body(fence) }
        for set in shared {
            set.index.forEachCandidate(containing: point) { body(set.fences[$0]) }
        }
    }

    /// The number of fences, own and shared.
    public var count: Int { own.count + shared.reduce(0) { $0 + $1.fences.count } }
}
