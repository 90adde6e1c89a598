import GeotifyCore

/// Why a change to the fences was refused: a stable code, which the command line and
/// MQTT replies report the same way, and a specific message for the person who has to
/// fix the request.
public struct FenceChangeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal this is; `code.rawValue` is what replies carry.
    public var code: ErrorCode
    /// One line saying what is wrong; for `invalid_*` codes it names the first
    /// `problemsNamed` problems and counts the rest.
    public var message: String
    /// Every validation problem, one each, for callers that list them a line each
    /// (empty for codes that are not about validation).
    public var problems: [FenceProblem]

    /// A refusal of kind `code`, saying `message`, with the validation `problems` behind it.
    public init(_ code: ErrorCode, _ message: String, problems: [FenceProblem] = []) {
        self.code = code
        self.message = message
        self.problems = problems
    }

    /// `code: message`, as logs and replies show it.
    public var description: String { "\(code.rawValue): \(message)" }

    /// The error for a device that has no entry in the fence file.
    public static func unknownDevice(_ device: String) -> FenceChangeError {
        FenceChangeError(.unknownDevice, "unknown device \"\(device)\": it is not in the fence file")
    }

    /// The error for a fence identifier that `device` does not have, naming the ones it has.
    public static func unknownFence(_ identifier: String, device: String, existing: [Fence]) -> FenceChangeError {
        unknownFence(identifier, in: "device \"\(device)\"", existing: existing)
    }

    /// The error for a fence identifier that `subject` (`device "d"`, `the shared set`)
    /// does not have, naming the ones it has.
    public static func unknownFence(_ identifier: String, in subject: String, existing: [Fence]) -> FenceChangeError {
        let known = existing.isEmpty
            ? "it has no fences"
            : "its fences: \(existing.map { "\"\($0.identifier)\"" }.joined(separator: ", "))"
        return FenceChangeError(.unknownFence, "\(subject) has no fence \"\(identifier)\" (\(known))")
    }

    /// The error for a group the fence file does not define, naming the ones it does.
    public static func unknownGroup(_ group: String, existing: [String]) -> FenceChangeError {
        let known = existing.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
        return FenceChangeError(
            .unknownGroup,
            "there is no group \"\(group)\" in the fence file (\(known.isEmpty ? "it has no groups" : "its groups: \(known)")); define it under \"groups\" first")
    }

    /// The error for a fence file that does not validate, with every problem.
    public static func invalidFile(_ path: String, _ problems: [FenceProblem]) -> FenceChangeError {
        invalid(.invalidFile, "the fence file \(path) is not valid, so it cannot be changed: ", problems)
    }

    /// The error for a change to a single fence file that several instances share the
    /// devices of (`shard`): none of them may write it.
    package static func readOnly(_ path: String, instances: Int) -> FenceChangeError {
        FenceChangeError(.readOnly, "the fence file \(path) is read-only to each of the \(instances) instances that share the devices; change it by hand or with geotify fences, or use a fence directory (docs/scaling.md)")
    }

    /// How many problems a message names before it counts the rest. A message goes out
    /// whole, in an MQTT reply and a log line: naming every problem, a command of 60 kB
    /// (fences with thousands of unknown keys) was answered with 820 kB.
    package static let problemsNamed = 10

    /// The error for problems that make fences, a file or an import invalid: the message
    /// joins the first `problemsNamed` problems, so a single line (a reply, a log entry)
    /// names them, and counts the rest; `problems` keeps them all.
    public static func invalid(_ code: ErrorCode, _ lead: String, _ problems: [FenceProblem]) -> FenceChangeError {
        let named = problems.prefix(problemsNamed).map(\.description).joined(separator: "; ")
        let more = problems.count > problemsNamed ? "; and \(problems.count - problemsNamed) more" : ""
        return FenceChangeError(code, lead + named + more, problems: problems)
    }
}
