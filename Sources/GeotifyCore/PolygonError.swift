/// Why a polygon fence area was refused, with a stable `code` and a human `message`.
public enum PolygonError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which ring of the polygon an error is about.
    public enum Ring: Sendable, Hashable, CustomStringConvertible {
        /// The outer boundary.
        case outer
        /// The hole at this index in `holes`.
        case hole(Int)

        /// "the outer ring" or "hole 2" (counted from 0, as the vertices are), for
        /// messages.
        public var description: String {
            switch self {
            case .outer: "the outer ring"
            case .hole(let index): "hole \(index)"
            }
        }

        /// The description at the start of a sentence: "The outer ring", "Hole 2".
        var sentenceStart: String { PolygonError.sentenceStart(description) }
    }

    /// One edge of a polygon: the ring it belongs to and the indices, in that ring as
    /// given, of the vertices it runs between.
    public struct Edge: Sendable, Hashable, CustomStringConvertible {
        public var ring: Ring
        public var from: Int
        public var to: Int

        public init(ring: Ring, from: Int, to: Int) {
            self.ring = ring
            self.from = from
            self.to = to
        }

        /// "the edge from vertex 2 to vertex 3 of the outer ring", for messages.
        public var description: String { "the edge from vertex \(from) to vertex \(to) of \(ring)" }
    }

    /// The ring has fewer than 3 distinct vertices (`distinct` is how many it has).
    case tooFewVertices(ring: Ring, distinct: Int)
    /// A vertex is not a valid position (latitude outside -90...90, longitude outside
    /// -180...180, or not finite).
    case vertexOutOfRange(ring: Ring, index: Int, vertex: Coordinate)
    /// The ring spans more than 180° of longitude, so its edges are ambiguous.
    case longitudeSpanTooWide(ring: Ring, span: Double)
    /// All vertices of the ring lie on one line: it encloses nothing.
    case zeroArea(ring: Ring)
    /// Two edges cross, touch or overlap at `at` (other than neighbouring edges of one
    /// ring at their shared vertex): a bow-tie, a figure eight, a spike, or a hole
    /// crossing the outer ring or another hole.
    case edgesIntersect(Edge, Edge, at: Coordinate)
    /// The polygon's `edges` overlap each other's longitudes so much that checking them
    /// for crossings would take too long (see `PolygonEdges.maximumWork`).
    case tooComplex(edges: Int)

    /// A stable machine-readable code for the error.
    public var code: String {
        switch self {
        case .tooFewVertices: "polygon.too_few_vertices"
        case .vertexOutOfRange: "polygon.vertex_out_of_range"
        case .longitudeSpanTooWide: "polygon.longitude_span_too_wide"
        case .zeroArea: "polygon.zero_area"
        case .edgesIntersect: "polygon.edges_intersect"
        case .tooComplex: "polygon.too_complex"
        }
    }

    /// A sentence for people saying what is wrong.
    public var message: String {
        switch self {
        case let .tooFewVertices(ring, distinct):
            "\(ring.sentenceStart) has \(distinct) distinct vertices; a polygon ring needs at least 3."
        case let .vertexOutOfRange(ring, index, vertex):
            "Vertex \(index) of \(ring) (latitude \(vertex.latitude), longitude \(vertex.longitude)) is out of range: latitude must be in -90...90 and longitude in -180...180."
        case let .longitudeSpanTooWide(ring, span):
            "\(ring.sentenceStart) spans \(span)° of longitude; a ring may span at most 180°."
        case let .zeroArea(ring):
            "The vertices of \(ring) all lie on one line, so it encloses no area."
        case let .edgesIntersect(first, second, at):
            "\(Self.sentenceStart(first.description)) and \(second) cross or touch at latitude \(at.latitude), longitude \(at.longitude); edges may meet only where two neighbouring edges of a ring share their vertex."
        case let .tooComplex(edges):
            "The polygon's \(edges) edges overlap each other's longitudes too much to check them for crossings in reasonable time; simplify it or split it into several fences."
        }
    }

    /// The human message.
    public var description: String { message }

    /// `text` with its first letter a capital, to start a sentence.
    static func sentenceStart(_ text: String) -> String {
        text.prefix(1).uppercased() + text.dropFirst()
    }
}
