import GeotifyCore

/// Devices that each have their own fences, as the fence file gives them today: every
/// device walks or drives around its home, with its fences (homes, workplaces, shops,
/// districts) scattered around that home.
struct PerDeviceWorkload: Sendable {
    /// Each device's fences.
    let fences: [[Fence]]
    /// Each device's fences as a fence book hands them to the evaluator (built once).
    let deviceFences: [DeviceFences]
    let stream: FixStream

    init(devices: Int, fencesPerDevice: Int, steps: Int, _ random: inout SeededRandom) {
        let places = Places(count: max(1, devices / 20), random: &random)
        let factory = FenceFactory(polygonShare: 0.2)
        var walkers: [Walker] = []
        var fences: [[Fence]] = []
        walkers.reserveCapacity(devices)
        fences.reserveCapacity(devices)
        for _ in 0..<devices {
            let home = Places.around(places.randomTown(&random), spread: 5_000, &random)
            walkers.append(Walker(home: home, range: 3_000, &random))
            fences.append((0..<fencesPerDevice).map { index in
                factory.fence("f\(index)", at: Places.around(home, spread: 6_000, &random), &random)
            })
        }
        self.fences = fences
        deviceFences = fences.map { DeviceFences(own: $0) }
        stream = FixStream(walkers: walkers, steps: steps, &random)
    }
}
