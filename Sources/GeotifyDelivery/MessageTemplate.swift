import Foundation
import GeotifyCore
import GeotifyJSON

/// A title or body written in the settings with the notification's fields in braces:
/// `{user|capitalized} {action} {fence}` gives "Alice entered home".
///
/// Fields: `id`, `device`, `user` (the device id's first level: `alice` of `alice/phone`),
/// `fence`, `event` (enter, exit, dwell), `action` (entered, left, stayed at), `note`,
/// `badge`, `lat`, `lon`, `acc` (empty without one), `tst` (seconds since 1970) and
/// `time` (ISO 8601, UTC). A field may be followed by `|capitalized`, `|upper` or
/// `|lower`. `{{` and `}}` are literal braces. The template is checked when the settings
/// load, so an unknown field is refused there, not at the first delivery.
package struct MessageTemplate: Sendable, Equatable, CustomStringConvertible {
    /// A field of the notification.
    package enum Field: String, Sendable, CaseIterable {
        case id, device, user, fence, event, action, note, badge, lat, lon, acc, tst, time
    }

    /// A change of letter case applied to a field's value.
    package enum Modifier: String, Sendable, CaseIterable {
        case capitalized, upper, lower
    }

    private enum Part: Sendable, Equatable {
        case text(String)
        case field(Field, Modifier?)
    }

    /// The template as written.
    package let source: String
    private let parts: [Part]

    /// The default title: "Alice entered home".
    package static let defaultTitle = MessageTemplate(source: "{user|capitalized} {action} {fence}", parts: [
        .field(.user, .capitalized), .text(" "), .field(.action, nil), .text(" "), .field(.fence, nil),
    ])
    /// The default body: the fence's note, as the app's notification showed it.
    package static let defaultBody = MessageTemplate(source: "{note}", parts: [.field(.note, nil)])

    /// Parses `source`; throws with the offending part when a field or modifier is
    /// unknown or a brace is not closed.
    package init(_ source: String) throws(DeliverySettingsError) {
        var parts: [Part] = []
        var literal = ""
        var index = source.startIndex
        while index < source.endIndex {
            let character = source[index]
            let next = source.index(after: index)
            if character == "}" {
                guard next < source.endIndex, source[next] == "}" else {
                    throw DeliverySettingsError("the template \"\(source)\" has a '}' without '{' (write '}}' for a brace)")
                }
                literal.append("}")
                index = source.index(after: next)
                continue
            }
            guard character == "{" else {
                literal.append(character)
                index = next
                continue
            }
            if next < source.endIndex, source[next] == "{" {
                literal.append("{")
                index = source.index(after: next)
                continue
            }
            guard let close = source[next...].firstIndex(of: "}") else {
                throw DeliverySettingsError("the template \"\(source)\" has a '{' that is not closed (write '{{' for a brace)")
            }
            let inside = source[next..<close].split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(inside[0]).trimmingCharacters(in: .whitespaces)
            guard let field = Field(rawValue: name) else {
                throw DeliverySettingsError("the template \"\(source)\" names an unknown field {\(name)} (fields: \(Field.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            var modifier: Modifier?
            if inside.count == 2 {
                let modifierName = String(inside[1]).trimmingCharacters(in: .whitespaces)
                guard let known = Modifier(rawValue: modifierName) else {
                    throw DeliverySettingsError("the template \"\(source)\" has an unknown modifier |\(modifierName) (modifiers: \(Modifier.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                modifier = known
            }
            if !literal.isEmpty {
                parts.append(.text(literal))
                literal = ""
            }
            parts.append(.field(field, modifier))
            index = source.index(after: close)
        }
        if !literal.isEmpty { parts.append(.text(literal)) }
        self.source = source
        self.parts = parts
    }

    private init(source: String, parts: [Part]) {
        self.source = source
        self.parts = parts
    }

    package var description: String { source }

    /// The text for `event`.
    package func render(_ event: DeliveryEvent) -> String {
        var out = ""
        for part in parts {
            switch part {
            case .text(let text):
                out += text
            case .field(let field, let modifier):
                let value = MessageTemplate.value(of: field, in: event)
                switch modifier {
                case nil: out += value
                case .upper: out += value.uppercased()
                case .lower: out += value.lowercased()
                case .capitalized: out += value.prefix(1).uppercased() + value.dropFirst()
                }
            }
        }
        return out
    }

    private static func value(of field: Field, in event: DeliveryEvent) -> String {
        switch field {
        case .id: event.id
        case .device: event.device
        case .user: String(TopicLevels.first(of: event.device))
        case .fence: event.fence
        case .event: event.kind.rawValue
        case .action:
            switch event.kind {
            case .enter: "entered"
            case .exit: "left"
            case .dwell: "stayed at"
            }
        case .note: event.note
        case .badge: String(event.badge)
        case .lat: JSONWriter.text(of: event.latitude)
        case .lon: JSONWriter.text(of: event.longitude)
        case .acc: event.accuracy.map { JSONWriter.text(of: $0) } ?? ""
        case .tst: JSONWriter.text(of: event.timestamp)
        case .time: CalendarTime(seconds: event.timestamp).iso8601
        }
    }
}
