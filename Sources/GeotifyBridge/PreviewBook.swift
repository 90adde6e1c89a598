import GeotifyCore
import GeotifyStore

/// The previews (the Peek) waiting for their commit or cancel, on one lane.
///
/// A preview holds the change it would make and the device's own fences it was made
/// against, not a copy of the fence file, so it costs a few hundred bytes however large
/// the file is. There are at most `perDevice` for a device and `total` on the lane; past
/// either, the oldest goes first. A preview lives `timeout` seconds and is used once; an
/// expired one is remembered as expired for another `timeout` (so a late commit hears
/// "expired", not "unknown"), then forgotten.
package struct PreviewBook: Sendable {
    /// A previewed change.
    package struct Preview: Sendable {
        package var change: FenceChange
        package var device: String
        /// The device's own fences when it was previewed: the commit is `stale` if they
        /// changed since.
        package var basis: [Fence]
        package var expires: Double
        /// Issue order, to find the oldest.
        var sequence: Int
    }

    package let timeout: Double
    package let perDevice: Int
    package let total: Int
    private var previews: [String: Preview] = [:]
    private var sequence = 0

    package init(timeout: Double, perDevice: Int, total: Int) {
        self.timeout = timeout
        self.perDevice = max(1, perDevice)
        self.total = max(1, total)
    }

    /// How many previews wait.
    package var count: Int { previews.count }

    /// Keeps a preview of `change` for `device` under `token`, made at `now`; returns when
    /// it expires. Makes room first by dropping the device's (or else the lane's) oldest.
    package mutating func add(token: String, change: FenceChange, device: String, basis: [Fence], now: Double) -> Double {
        expire(now: now)
        let own = previews.filter { $0.value.device == device }
        if own.count >= perDevice, let oldest = own.min(by: { $0.value.sequence < $1.value.sequence }) {
            previews[oldest.key] = nil
        }
        if previews.count >= total, let oldest = previews.min(by: { $0.value.sequence < $1.value.sequence }) {
            previews[oldest.key] = nil
        }
        sequence += 1
        let expires = now + timeout
        previews[token] = Preview(change: change, device: device, basis: basis, expires: expires, sequence: sequence)
        return expires
    }

    /// Takes the preview `token` of `device` (a token is used once), or says why not.
    package mutating func take(_ token: String, device: String, now: Double) throws(InputError) -> Preview {
        guard let preview = previews[token], preview.device == device else {
            throw InputError(.unknownToken, "no preview with the token \"\(token)\" for device \"\(device)\" (tokens live for \(Int(timeout)) s, are used once, and a device keeps at most \(perDevice))")
        }
        previews[token] = nil
        guard preview.expires > now else {
            throw InputError(.expiredToken, "the preview \"\(token)\" expired \(Int(now - preview.expires)) s ago; preview again")
        }
        return preview
    }

    /// Forgets the previews that expired at least `timeout` before `now`.
    package mutating func expire(now: Double) {
        guard !previews.isEmpty else { return }
        previews = previews.filter { $0.value.expires > now - timeout }
    }
}
