import GeotifyCore

extension FenceBook {
    /// The fences each device named in the file is announced with (Home Assistant
    /// entities, presence topics): its own, and those of the shared sets that apply to
    /// it when a set is small enough for one entity a fence (at most `limit`). A set of
    /// thousands of points of interest is evaluated but not announced fence by fence.
    func announcedFences(limit: Int) -> [String: [Fence]] {
        var devices = Set(self.devices.keys)
        for members in groups.values { devices.formUnion(members) }
        var announced: [String: [Fence]] = [:]
        for device in devices {
            let fences = deviceFences(of: device)
            announced[device] = fences.own + fences.shared.filter { $0.fences.count <= limit }.flatMap(\.fences)
        }
        return announced
    }
}
