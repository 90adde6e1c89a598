/// One thing wrong (or clamped) in a fence file or a fence given by CLI or command:
/// where it is (file, line, device, fence) and the reason, in words a person can act on.
public struct FenceProblem: Sendable, Equatable, CustomStringConvertible {
    public var file: String?
    public var line: Int?
    public var device: String?
    /// The fence's identifier, or its position ("#2") when it has no usable identifier.
    public var fence: String?
    public var reason: String

    public init(file: String? = nil, line: Int? = nil, device: String? = nil, fence: String? = nil, reason: String) {
        self.file = file
        self.line = line
        self.device = device
        self.fence = fence
        self.reason = reason
    }

    /// `file:line: device "d", fence "f": reason`, leaving out what is unknown.
    public var description: String {
        var text = ""
        if let file {
            text += file
            if let line { text += ":\(line)" }
            text += ": "
        }
        var subject: [String] = []
        if let device { subject.append("device \"\(device)\"") }
        if let fence { subject.append(fence.hasPrefix("#") ? "fence \(fence)" : "fence \"\(fence)\"") }
        if !subject.isEmpty { text += subject.joined(separator: ", ") + ": " }
        return text + reason
    }
}
