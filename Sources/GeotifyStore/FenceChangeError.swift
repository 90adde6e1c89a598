import GeotifyCore

/// Why a change to the fences was refused: a stable code, which the command line and
/// MQTT replies report the same way, and a specific message for the person who has to
/// fix the request.
public struct FenceChangeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The category of a refusal; the raw value is the stable code (`unknown_device`).
    public enum Code: String, Sendable, CaseIterable {
        /// `edit` or `delete` named a device that is not in the file.
        case unknownDevice = "unknown_device"
        /// `edit` or `delete` named a fence the device does not have.
        case unknownFence = "unknown_fence"
        /// The change would give one device two fences with the same identifier.
        case duplicateIdentifier = "duplicate_identifier"
        /// The change would give a device more than `maximumFencesPerDevice` fences.
        case fenceLimit = "fence_limit"
        /// A fence lacks a required field; `problems` lists every reason.
        case missingField = "missing_field"
        /// A fence field has the wrong JSON type.
        case wrongType = "wrong_type"
        /// A fence field's value is out of its range (latitude 95, a negative radius).
        case outOfRange = "out_of_range"
        /// A fence has a key Geotify does not know (a typo).
        case unknownKey = "unknown_key"
        /// A fence field's value is not one Geotify accepts (an unknown event type, a
        /// bad identifier or polygon).
        case invalidValue = "invalid_value"
        /// The device identifier cannot be used (a wildcard, an empty topic level).
        case invalidDevice = "invalid_device"
        /// The fence file itself does not validate, so it cannot be changed safely.
        case invalidFile = "invalid_file"
        /// A file to import is not in a format Geotify reads, or holds bad values.
        case invalidImport = "invalid_import"
        /// The file changed since it was read; nothing was written.
        case stale
        /// The file could not be read or written.
        case io
    }

    /// What kind of refusal this is; `code.rawValue` is what replies carry.
    public var code: Code
    /// One line saying what is wrong; for `invalid_*` codes it lists every problem.
    public var message: String
    /// Every validation problem, one each, for callers that list them a line each
    /// (empty for codes that are not about validation).
    public var problems: [FenceProblem]

    /// A refusal of kind `code`, saying `message`, with the validation `problems` behind it.
    public init(_ code: Code, _ message: String, problems: [FenceProblem] = []) {
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
        let known = existing.isEmpty
            ? "it has no fences"
            : "its fences: \(existing.map { "\"\($0.identifier)\"" }.joined(separator: ", "))"
        return FenceChangeError(.unknownFence, "device \"\(device)\" has no fence \"\(identifier)\" (\(known))")
    }

    /// The error for a fence file that does not validate, with every problem.
    public static func invalidFile(_ path: String, _ problems: [FenceProblem]) -> FenceChangeError {
        invalid(.invalidFile, "the fence file \(path) is not valid, so it cannot be changed: ", problems)
    }

    /// The error for problems that make fences, a file or an import invalid: the message
    /// joins every problem so a single line (a reply, a log entry) still names them all.
    public static func invalid(_ code: Code, _ lead: String, _ problems: [FenceProblem]) -> FenceChangeError {
        FenceChangeError(code, lead + problems.map(\.description).joined(separator: "; "), problems: problems)
    }
}

extension FenceChangeError.Code {
    /// The code for a fence that does not validate, by the kind of its first problem.
    public init(_ kind: FenceIssue.Kind) {
        switch kind {
        case .missingField: self = .missingField
        case .wrongType: self = .wrongType
        case .outOfRange: self = .outOfRange
        case .unknownKey: self = .unknownKey
        case .invalidValue: self = .invalidValue
        }
    }
}
