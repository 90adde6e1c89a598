import Foundation

/// What the evaluator reads of one of a device's own fences for every fix near it: a
/// circle's centre, radius and the cosine of its latitude, the fence's size, the revision
/// it was added in and whether it has rules of its own. A device's shapes are one
/// contiguous array (56 bytes a fence), so a fix's checks do not touch the `Fence`
/// objects, which lie scattered over the heap and span several cache lines each (with
/// 10 000 devices × 20 fences, a cache miss or more for each fence checked); the `Fence`
/// is read only for a polygon, rules of its own, or a transition.
struct FenceShape: Sendable {
    /// A circle's centre in degrees; unused for a polygon.
    let latitude: Double
    let longitude: Double
    /// A circle's radius in metres; negative for a polygon.
    let radius: Double
    /// cos(latitude), for `CircleDistance`.
    let cosineOfLatitude: Double
    /// `Fence.size`.
    let size: Double
    /// `Fence.addedRevision`.
    let addedRevision: Int
    /// `Fence.overridesRules`.
    let overridesRules: Bool

    init(_ fence: Fence) {
        switch fence.region {
        case .circle(let center, let radius):
            latitude = center.latitude
            longitude = center.longitude
            self.radius = radius
            cosineOfLatitude = cos(center.latitude * .pi / 180)
        case .polygon:
            latitude = 0
            longitude = 0
            radius = -1
            cosineOfLatitude = 1
        }
        size = fence.size
        addedRevision = fence.addedRevision
        overridesRules = fence.overridesRules
    }

    /// Whether the fence is a circle (else a polygon, checked through its `Fence`).
    var isCircle: Bool { radius >= 0 }

    /// A circle's centre.
    var center: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}
