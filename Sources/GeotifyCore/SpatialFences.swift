/// A shared set's fences laid out for evaluating fixes: numbered in the order of their
/// spatial index (so fences near each other on the Earth are near each other in memory),
/// each reduced to a slot of what deciding a fix reads: its identifier, a circle's centre
/// and radius, its size, the revision it was added in, whether it overrides the rules.
///
/// With a million fences the `Fence` objects are scattered over hundreds of megabytes:
/// reading one is a cache and TLB miss. The candidates of a fix are a few neighbouring
/// slots instead, so a fix costs the index query and a few cache lines, and a circle's
/// `Fence` is read only when the device's relation to it changes. A polygon's check
/// reads its run from `PackedPolygons`, where the runs are in slot order too. It is a
/// class so that reading a slot or a polygon through a set's `spatial` borrows its
/// arrays instead of copying (and retaining and releasing) all of them for every
/// candidate.
package final class SpatialFences: Sendable {
    /// One fence as a fix's checks read it.
    package struct Slot: Sendable {
        package let identifier: String
        /// A circle's centre (a polygon's is not read).
        package let center: Coordinate
        /// The fence's `size`: a circle's radius.
        package let size: Double
        package let addedRevision: Int
        /// Where the polygon's run starts in `polygons`, or -1 for a circle.
        package let polygon: Int
        /// Where the fence is in the set's `fences`.
        package let position: UInt32
        package let overridesRules: Bool
    }

    /// The index over the fences' bounding boxes; its candidates are slot numbers.
    package let index: FenceIndex
    /// The fences with a non-empty bounding box, in the order of `index`.
    package let slots: [Slot]
    /// The polygons of the polygon fences, in the order of their slots.
    private let polygons: PackedPolygons

    package init(_ fences: [Fence]) {
        let (index, order) = FenceIndex(fences).numberedInTreeOrder()
        var slots: [Slot] = []
        var polygons = PackedPolygons(capacityFor: fences.lazy.compactMap { fence -> Polygon? in
            if case .polygon(let polygon) = fence.region { return polygon }
            return nil
        })
        slots.reserveCapacity(order.count)
        for position in order {
            let fence = fences[position]
            var polygon = -1
            var center = Coordinate(latitude: 0, longitude: 0)
            switch fence.region {
            case .circle(let circleCenter, _):
                center = circleCenter
            case .polygon(let shape):
                polygon = polygons.append(shape)
            }
            slots.append(Slot(
                identifier: fence.identifier, center: center, size: fence.size, addedRevision: fence.addedRevision,
                polygon: polygon, position: UInt32(position), overridesRules: fence.overridesRules))
        }
        self.index = index
        self.slots = slots
        self.polygons = polygons
    }

    /// `Region.containment` of the fence in `slot`, from the slot alone for a circle.
    @inline(__always)
    package func containment(of slot: Slot, point: Coordinate, accuracy: Double, hysteresis: Double) -> Containment {
        if slot.polygon < 0 {
            return Region.circle(center: slot.center, radius: slot.size)
                .containment(of: point, accuracy: accuracy, hysteresis: hysteresis)
        }
        return polygons.withGeometry(at: slot.polygon) { polygon in
            polygon.containment(of: point, accuracy: accuracy, hysteresis: hysteresis, size: slot.size)
        }
    }
}
