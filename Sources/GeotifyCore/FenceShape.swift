/// What the evaluator reads of one of a device's own fences for every fix near it: a
/// circle's centre, radius and the cosine of its latitude, the fence's size, the revision
/// it was added in, and whether it has rules of its own. It is read out of the device's
/// `OwnFenceTable`, so a fix's checks do not touch the `Fence` objects, which lie
/// scattered over the heap and span several cache lines each (with 10 000 devices × 20
/// fences, a cache miss or more for each fence checked); the `Fence` is read only for
/// rules of its own or a transition.
struct FenceShape {
    /// A circle's centre in degrees; unused for a polygon.
    let latitude: Double
    let longitude: Double
    /// A circle's radius in metres; negative for a polygon.
    let radius: Double
    /// A circle's cos(latitude), for `CircleDistance`.
    let cosineOfLatitude: Double
    /// `Fence.size`.
    let size: Double
    /// `Fence.addedRevision`.
    let addedRevision: Int
    /// `Fence.overridesRules`.
    let overridesRules: Bool

    /// Whether the fence is a circle (else a polygon).
    @inline(__always)
    var isCircle: Bool { radius >= 0 }

    /// A circle's centre.
    @inline(__always)
    var center: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}
