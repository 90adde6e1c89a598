/// Which devices one instance of a sharded deployment owns: instance `index` of `count`
/// (`"2/3"`, counted from 0 like a StatefulSet's pods) owns every device whose stable
/// hash lands on it, and only it evaluates, remembers, notifies and answers commands for
/// that device. Every instance subscribes to the same position topics and drops the
/// others' messages from the topic alone (`owns(_:)`), so the split needs nothing from
/// the broker but one persistent session per instance.
///
/// The hash is jump consistent hashing (Lamping and Veach, "A Fast, Minimal Memory,
/// Consistent Hash Algorithm", 2014) over a mixed FNV-1a of the device identifier: the
/// same in every process and on every platform, and when the count changes from N to
/// N + 1 only about 1/(N + 1) of the devices move (to the new instance), which keeps a
/// reshard small. The mix makes the shard independent of the evaluation lane inside an
/// instance (a plain FNV-1a modulo both would put all of a shard's devices on some lanes).
public struct ShardAssignment: Sendable, Equatable, CustomStringConvertible {
    /// This instance, from 0 to `count - 1`.
    public let index: Int
    /// How many instances share the devices.
    public let count: Int

    /// The most instances one deployment may have.
    public static let maximumCount = 1_024

    /// Why a shard setting cannot be used, as a sentence.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Instance `index` of `count`; throws unless 0 ≤ index < count ≤ `maximumCount`.
    public init(index: Int, count: Int) throws(Invalid) {
        guard count >= 1, count <= ShardAssignment.maximumCount else {
            throw Invalid(message: "the number of shards must be from 1 to \(ShardAssignment.maximumCount), not \(count)")
        }
        guard index >= 0, index < count else {
            throw Invalid(message: "the shard must be from 0 to \(count - 1) when there are \(count) (counted from 0), not \(index)")
        }
        self.index = index
        self.count = count
    }

    /// The pod name an `ordinal/<count>` shard is read from: `POD_NAME` (set from the
    /// downward API, docs/scaling.md), else `HOSTNAME` (a StatefulSet pod's hostname is its
    /// name); an empty value counts as unset, so an empty `POD_NAME` still falls back.
    public static func podName(in environment: [String: String]) -> String? {
        ["POD_NAME", "HOSTNAME"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
    }

    /// Parses `"<index>/<count>"` (`"2/3"`), or `"ordinal/<count>"`, where the index is the
    /// ordinal at the end of `podName` (`geotify-2` → 2), as a Kubernetes StatefulSet
    /// names its pods.
    public init(parsing text: String, podName: String?) throws(Invalid) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = ShardAssignment.number(parts[1]) else {
            throw Invalid(message: "a shard is \"<index>/<count>\" like \"2/3\" (instance 2 of 3, counted from 0) or \"ordinal/<count>\", not \"\(text.prefix(100))\"")
        }
        if parts[0] == "ordinal" {
            guard let podName, !podName.isEmpty else {
                throw Invalid(message: "\"ordinal/\(count)\" takes the index from the pod name, but neither POD_NAME nor HOSTNAME is set")
            }
            guard let dash = podName.lastIndex(of: "-"), let ordinal = ShardAssignment.number(podName[podName.index(after: dash)...]) else {
                throw Invalid(message: "\"ordinal/\(count)\" takes the index from the pod name, but \"\(podName.prefix(100))\" does not end in -<ordinal> like a StatefulSet pod (geotify-2)")
            }
            try self.init(index: ordinal, count: count)
        } else {
            guard let index = ShardAssignment.number(parts[0]) else {
                throw Invalid(message: "the shard index in \"\(text.prefix(100))\" must be a number from 0, or \"ordinal\"")
            }
            try self.init(index: index, count: count)
        }
    }

    public var description: String { "\(index)/\(count)" }

    /// The MQTT client id of this instance, from the configured `base`: `base-<index>`,
    /// so each instance has a persistent session of its own (and the base alone for a
    /// single instance, so `0/1` keeps the session of an unsharded bridge).
    public func clientID(_ base: String) -> String {
        count == 1 ? base : "\(base)-\(index)"
    }

    /// Whether this instance owns `device`.
    public func owns(_ device: String) -> Bool {
        count == 1 || ShardAssignment.shard(of: device, among: count) == index
    }

    /// That `device` is another instance's, naming the one that owns it, as refusals
    /// word it: `alice/phone belongs to another instance of the bridge (instance 1 of 2;
    /// this is instance 0)`.
    package func otherInstance(owning device: String) -> String {
        "\(device) belongs to another instance of the bridge (instance \(ShardAssignment.shard(of: device, among: count)) of \(count); this is instance \(index))"
    }

    /// The instance that owns `device` when there are `count`.
    public static func shard(of device: String, among count: Int) -> Int {
        shard(ofHash: StableHash.fnv1a(device), among: count)
    }

    /// The instance that owns a device whose FNV-1a hash is `hash`: a SplitMix64
    /// finaliser, then jump consistent hashing.
    public static func shard(ofHash hash: UInt64, among count: Int) -> Int {
        var key = hash
        key = (key ^ (key >> 30)) &* 0xBF58_476D_1CE4_E5B9
        key = (key ^ (key >> 27)) &* 0x94D0_49BB_1331_11EB
        key ^= key >> 31
        var bucket: Int64 = -1
        var next: Int64 = 0
        while next < Int64(count) {
            bucket = next
            key = key &* 2_862_933_555_777_941_757 &+ 1
            next = Int64(Double(bucket + 1) * (Double(Int64(1) << 31) / Double((key >> 33) + 1)))
        }
        return Int(bucket)
    }

    /// A decimal number of at most four digits, nil for anything else.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 4, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }
}
