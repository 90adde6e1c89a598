import GeotifyCore

/// Where the synthetic world's fences and devices gather: real city centres, including
/// ones in the Arctic and Antarctic and on both sides of the antimeridian, and towns
/// scattered up to 250 km around them.
///
/// A workload asks for as many towns as its size calls for (one per 200 shared
/// fences), so a deployment with a million fences covers more ground rather than piling
/// a thousand times more fences onto the same streets: that is what a bigger
/// deployment looks like, and it keeps the fences around a point comparable across sizes.
struct Places {
    /// City centres (latitude, longitude in degrees).
    static let cities: [Coordinate] = [
        (52.520, 13.405), (51.507, -0.128), (48.857, 2.352), (40.417, -3.704), (41.903, 12.496),
        (59.329, 18.069), (59.913, 10.752), (60.170, 24.938), (64.146, -21.942), (55.756, 37.617),
        (41.008, 28.978), (30.044, 31.236), (6.524, 3.379), (-1.286, 36.817), (-26.204, 28.047),
        (-33.925, 18.424), (25.205, 55.271), (19.076, 72.878), (28.704, 77.102), (12.972, 77.595),
        (1.352, 103.820), (13.756, 100.502), (-6.208, 106.846), (22.320, 114.169), (31.230, 121.474),
        (39.904, 116.407), (37.567, 126.978), (35.690, 139.692), (34.694, 135.502), (14.600, 120.984),
        (-33.869, 151.209), (-37.814, 144.963), (-36.848, 174.763), (-41.287, 174.776), (-18.142, 178.442),
        (-21.139, -175.204), (-13.834, -171.760), (-16.790, -179.980), (64.734, 177.514), (53.037, 158.656),
        (21.307, -157.858), (61.218, -149.900), (71.290, -156.789), (49.283, -123.121), (37.775, -122.419),
        (34.052, -118.244), (39.739, -104.990), (41.878, -87.630), (43.653, -79.383), (40.713, -74.006),
        (19.433, -99.133), (4.711, -74.072), (-12.046, -77.043), (-23.551, -46.633), (-34.604, -58.382),
        (-33.449, -70.669), (-54.801, -68.303), (64.181, -51.694), (78.223, 15.647), (78.925, 11.922),
        (82.501, -62.348), (-77.846, 166.676), (-89.998, 139.270), (89.500, 30.000),
    ].map { Coordinate(latitude: $0.0, longitude: $0.1) }

    /// The towns: every city centre first, then towns around the cities in turn.
    let towns: [Coordinate]

    init(count: Int, random: inout SeededRandom) {
        var towns: [Coordinate] = []
        towns.reserveCapacity(max(count, 1))
        for index in 0..<max(count, 1) {
            let city = Places.cities[index % Places.cities.count]
            if index < Places.cities.count {
                towns.append(city)
            } else {
                // Uniform over the disc: the square root spreads towns evenly by area.
                let distance = 250_000 * random.unit().squareRoot()
                towns.append(Sphere.destination(from: city, distance: distance, bearing: random.uniform(0...(2 * Double.pi))))
            }
        }
        self.towns = towns
    }

    /// A town chosen uniformly.
    func randomTown(_ random: inout SeededRandom) -> Coordinate {
        towns[random.below(towns.count)]
    }

    /// A point around `town`: normally distributed with `spread` metres standard
    /// deviation, as homes, shops and streets cluster around a centre.
    static func around(_ town: Coordinate, spread: Double, _ random: inout SeededRandom) -> Coordinate {
        Sphere.destination(from: town, distance: abs(random.normal()) * spread, bearing: random.uniform(0...(2 * Double.pi)))
    }
}
