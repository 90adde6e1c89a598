import GeotifyCore

extension FenceBook {
    /// The fences each device named in the file is announced with (Home Assistant
    /// entities, presence topics): its own, and those of the shared sets that apply to
    /// it when a set is small enough for one entity a fence (at most `limit`). A set of
    /// thousands of points of interest is evaluated but not announced fence by fence.
    /// With `scope`, only the devices in it.
    func announcedFences(limit: Int, among scope: Set<String>? = nil) -> [String: [Fence]] {
        var devices: Set<String>
        if let scope {
            devices = scope.filter(knows)
        } else {
            devices = Set(self.devices.keys)
            for members in groups.values { devices.formUnion(members) }
        }
        var announced: [String: [Fence]] = [:]
        for device in devices {
            announced[device] = deviceFences(of: device).announced(limit: limit)
        }
        return announced
    }

    /// The shared sets announced fence by fence (their occupancy entities in Home
    /// Assistant), by owner: those of at most `limit` fences, as `announcedFences`.
    func announcedSharedFences(limit: Int) -> [String: [Fence]] {
        shared.filter { $0.value.fences.count <= limit }.mapValues(\.fences)
    }
}

extension DeviceFences {
    /// The fences a device is announced with (`FenceBook.announcedFences`): its own, and
    /// those of its shared sets of at most `limit` fences.
    func announced(limit: Int) -> [Fence] {
        own + shared.filter { $0.fences.count <= limit }.flatMap(\.fences)
    }
}
