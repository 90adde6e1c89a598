/// Which of the bridge's lanes a device's messages go to, as `Bridge.lane(of:among:)`
/// decides it (FNV-1a of the device identifier, modulo the number of lanes). That
/// function is internal to GeotifyBridge, so it is restated here; the side-by-side
/// scenario needs it to put one sentinel on every lane.
enum BridgeLane {
    /// The lane of `device` among `count` lanes.
    static func of(_ device: String, among count: Int) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in device.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return Int(hash % UInt64(count))
    }
}
