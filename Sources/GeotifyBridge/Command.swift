import GeotifyJSON
import GeotifyStore

/// A request on `geotify/cmd/<device>`: `{"action": ..., "id": ...}`, where the optional
/// `id` is a correlation string echoed in the reply.
///
/// The actions are the app's list screen, Add/Edit form, Delete and Peek & Pop:
/// `list`, `get`, `add`, `edit`, `delete` (which, without `"confirm": true`, answers like
/// a preview and waits for a `commit`), `preview` (the Peek: what a change would do,
/// with a token), `commit` and `cancel` (the Pop, or not), and `resetBadge` (the app
/// becoming active).
///
/// A command holds exactly the fields of its action: an unknown field (a typo such as
/// `"fnece"`, or a field of another action) is refused rather than ignored, and so is a
/// field given twice anywhere in the command, as in the fence file.
public struct Command: Sendable, Equatable {
    /// What the request asks for.
    public enum Action: Sendable, Equatable {
        case resetBadge
        case list
        case get(fence: String)
        case add(fence: JSON)
        case edit(fence: String, changes: JSONObject)
        case delete(fence: String, confirm: Bool)
        case preview(Proposal)
        case commit(token: String)
        case cancel(token: String)

        /// Whether the action writes the fence file (and so spends the device's
        /// `FenceWriteBudget`): an add, an edit, a confirmed delete, a commit.
        package var writesFences: Bool {
            switch self {
            case .add, .edit, .delete(_, confirm: true), .commit: true
            case .resetBadge, .list, .get, .delete(_, confirm: false), .preview, .cancel: false
            }
        }
    }

    /// A change proposed for a preview.
    public enum Proposal: Sendable, Equatable {
        case add(fence: JSON)
        case edit(fence: String, changes: JSONObject)
        case delete(fence: String)

        /// The change for `device`'s fences.
        public func change(for device: String) -> FenceChange {
            switch self {
            case .add(let fence): .add(device: device, fence: fence)
            case .edit(let fence, let changes): .edit(device: device, identifier: fence, fields: changes)
            case .delete(let fence): .delete(device: device, identifier: fence)
            }
        }

        /// "add", "edit" or "delete".
        public var name: String {
            switch self {
            case .add: "add"
            case .edit: "edit"
            case .delete: "delete"
            }
        }
    }

    /// The actions understood, for error messages.
    public static let actions = ["list", "get", "add", "edit", "delete", "preview", "commit", "cancel", "resetBadge"]

    public var action: Action
    /// The correlation string to echo in the reply.
    public var id: String?

    public init(action: Action, id: String? = nil) {
        self.action = action
        self.id = id
    }

    /// What decoding a payload found: the correlation id and action name whenever
    /// they could be read (so even a refusal can be answered in kind), and the command
    /// or why there is none.
    public struct Decoded: Sendable {
        public var id: String?
        public var actionName: String?
        public var result: Result<Command, InputError>
    }

    /// Decodes a command payload, refusing anything malformed with a specific error.
    public static func decode(_ payload: [UInt8], maximumBytes: Int) -> Decoded {
        if payload.isEmpty {
            return Decoded(id: nil, actionName: nil, result: .failure(InputError(.emptyPayload, "the command is empty; send {\"action\": \"list\"}, for example")))
        }
        if payload.count > maximumBytes {
            return Decoded(id: nil, actionName: nil, result: .failure(InputError(.payloadTooLarge, "the command is \(payload.count) bytes; at most \(maximumBytes) are accepted")))
        }
        let json: JSON
        do {
            json = try JSONParser(maxDepth: 16, rejectingDuplicateMembers: true).parse(payload)
        } catch {
            let refusal = error.duplicateMember.map { name in
                InputError(.duplicateField, "the field \"\(name)\" is given more than once (line \(error.line), column \(error.column)); give each field once")
            }
            return Decoded(id: nil, actionName: nil, result: .failure(refusal ?? InputError(.invalidJSON, "the command is not JSON: \(error)")))
        }
        guard case .object(let object) = json else {
            return Decoded(id: nil, actionName: nil, result: .failure(InputError(.notAnObject, "a command must be a JSON object, not \(json.kindDescription)")))
        }
        let id = object["id"]?.stringValue
        let name = object["action"]?.stringValue
        do throws(InputError) {
            if let value = object["id"], value.stringValue == nil {
                throw InputError(.wrongType, "\"id\" must be a string, not \(value.kindDescription)")
            }
            return Decoded(id: id, actionName: name, result: .success(Command(action: try action(object), id: id)))
        } catch {
            return Decoded(id: id, actionName: name, result: .failure(error))
        }
    }

    private static func action(_ object: JSONObject) throws(InputError) -> Action {
        let name = try string(object, "action", hint: "one of \(actions.joined(separator: ", "))")
        if let fields = actionFields[name] {
            try only(["action", "id"] + fields, in: object, of: "a \(name) command")
        }
        switch name {
        case "resetBadge": return .resetBadge
        case "list": return .list
        case "get": return .get(fence: try string(object, "fence", hint: "the identifier of the fence"))
        case "add": return .add(fence: try fence(object))
        case "edit": return .edit(fence: try string(object, "fence", hint: "the identifier of the fence"), changes: try changes(object))
        case "delete":
            return .delete(fence: try string(object, "fence", hint: "the identifier of the fence"), confirm: try bool(object, "confirm") ?? false)
        case "preview":
            guard let proposal = object["change"] else {
                throw InputError(.missingField, "missing \"change\" (the add, edit or delete to preview, e.g. {\"action\": \"delete\", \"fence\": \"home\"})")
            }
            guard case .object(let change) = proposal else {
                throw InputError(.wrongType, "\"change\" must be an object, not \(proposal.kindDescription)")
            }
            let changeName = try string(change, "action", hint: "add, edit or delete")
            if let fields = changeFields[changeName] {
                try only(["action"] + fields, in: change, of: "the \"change\" of a preview (\(changeName))")
            }
            switch changeName {
            case "add": return .preview(.add(fence: try fence(change)))
            case "edit": return .preview(.edit(fence: try string(change, "fence", hint: "the identifier of the fence"), changes: try changes(change)))
            case "delete": return .preview(.delete(fence: try string(change, "fence", hint: "the identifier of the fence")))
            case let other: throw InputError(.unknownAction, "a preview is of an add, edit or delete, not \"\(other)\"")
            }
        case "commit": return .commit(token: try string(object, "token", hint: "the token of a preview"))
        case "cancel": return .cancel(token: try string(object, "token", hint: "the token of a preview"))
        default: throw InputError(.unknownAction, "unknown action \"\(name)\" (one of \(actions.joined(separator: ", ")))")
        }
    }

    /// The fields of each action besides `action` and `id`.
    private static let actionFields: [String: [String]] = [
        "resetBadge": [], "list": [], "get": ["fence"], "add": ["fence"], "edit": ["fence", "changes"],
        "delete": ["fence", "confirm"], "preview": ["change"], "commit": ["token"], "cancel": ["token"],
    ]

    /// The fields of each change a preview can be of, besides `action`.
    private static let changeFields: [String: [String]] = ["add": ["fence"], "edit": ["fence", "changes"], "delete": ["fence"]]

    /// Refuses the first member of `object` not in `allowed`, naming what is.
    private static func only(_ allowed: [String], in object: JSONObject, of what: String) throws(InputError) {
        for key in object.keys where !allowed.contains(key) {
            throw InputError(.unknownKey, "unknown field \"\(key)\" in \(what), which has only \(allowed.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
    }

    private static func string(_ object: JSONObject, _ key: String, hint: String) throws(InputError) -> String {
        switch object[key] {
        case nil: throw InputError(.missingField, "missing \"\(key)\" (\(hint))")
        case .string(let value)?: return value
        case let other?: throw InputError(.wrongType, "\"\(key)\" must be a string, not \(other.kindDescription)")
        }
    }

    private static func bool(_ object: JSONObject, _ key: String) throws(InputError) -> Bool? {
        switch object[key] {
        case nil: return nil
        case .bool(let value)?: return value
        case let other?: throw InputError(.wrongType, "\"\(key)\" must be true or false, not \(other.kindDescription)")
        }
    }

    private static func fence(_ object: JSONObject) throws(InputError) -> JSON {
        switch object["fence"] {
        case nil: throw InputError(.missingField, "missing \"fence\" (the fence to add, as in the fence file)")
        case .object(let fence)?: return .object(fence)
        case let other?: throw InputError(.wrongType, "\"fence\" must be an object, not \(other.kindDescription)")
        }
    }

    private static func changes(_ object: JSONObject) throws(InputError) -> JSONObject {
        switch object["changes"] {
        case nil: throw InputError(.missingField, "missing \"changes\" (the fields to replace, e.g. {\"radius\": 150})")
        case .object(let changes)?: return changes
        case let other?: throw InputError(.wrongType, "\"changes\" must be an object, not \(other.kindDescription)")
        }
    }
}
