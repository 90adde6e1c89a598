import GeotifyCore
import GeotifyJSON

/// The part of the fence file a change depends on, as it was when the change was
/// previewed: the device's own fences (or that the file did not list the device). A
/// commit goes ahead when that part is unchanged, whatever else changed in the file
/// meanwhile, so commands for different devices never make each other stale; the change
/// is then applied to the file as it is now, keeping everyone else's changes.
///
/// Fences are compared in their file form, so the revisions the bridge assigns do not
/// count: a basis made from the fences in force matches one made from the file. It
/// holds one device's fences (at most `maximumFencesPerDevice`), not a copy of the file.
public struct FenceChangeBasis: Sendable, Equatable {
    /// The device the change is about.
    public let device: String
    /// Its fences in the file's form; nil when the file did not list the device.
    private let fences: [JSON]?

    /// The basis of a change to `device` whose fences were `fences` (nil: not listed).
    public init(device: String, fences: [Fence]?) {
        self.device = device
        self.fences = fences?.map(FenceCodec.encode)
    }

    /// The basis of `change` in `book`: the fences of the change's device there.
    public init(of change: FenceChange, in book: FenceBook) {
        self.init(device: change.device, fences: book.devices[change.device])
    }
}
