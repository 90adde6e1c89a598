import GeotifyCore

/// Fences every device shares (zones, sites, districts, published once for a whole
/// fleet), circles and polygons mixed, and devices walking and driving among them.
struct SharedWorkload: Sendable {
    let fences: [Fence]
    let stream: FixStream

    init(fences count: Int, devices: Int, steps: Int, _ random: inout SeededRandom) {
        // One town per 100 fences: a bigger deployment covers more ground.
        let places = Places(count: max(1, count / 100), random: &random)
        let factory = FenceFactory(polygonShare: 0.25)
        fences = (0..<count).map { index in
            factory.fence("s\(index)", at: Places.around(places.randomTown(&random), spread: 7_000, &random), &random)
        }
        let walkers = (0..<devices).map { _ in
            Walker(home: Places.around(places.randomTown(&random), spread: 7_000, &random), range: 3_000, &random)
        }
        stream = FixStream(walkers: walkers, steps: steps, &random)
    }
}
