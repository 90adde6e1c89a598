import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// One key of the settings file: its name, the values it takes, its default, what it
/// does, and the command-line flag that sets it too, if any. `Settings.keys` is the
/// table of them all; the settings loader, the commands' flags, `geotify help settings`
/// and the "did you mean" for an unknown key all read that table, so they cannot drift
/// apart.
///
/// A key is made by one of the constructors below from a key path into `Settings`, so
/// the value's type, its check and where it goes are written once. The default is the
/// initial value of that field of `Settings`, read through the key path. Nested keys
/// are named with dots (`homeassistant.prefix`) after a key of kind `object`.
package struct SettingsKey: Sendable {
    /// What a key's value may be.
    package enum Kind: Sendable, Equatable {
        case text
        /// A string that must not be empty (leave the key out instead).
        case nonEmptyText
        /// A file or directory; relative to the settings file, or to the working
        /// directory when given as a flag.
        case path
        case bool
        /// A number in the range (`greatestFiniteMagnitude` as the upper bound: none).
        case number(ClosedRange<Double>)
        /// A whole number in the range (`Int.max` as the upper bound: none).
        case wholeNumber(ClosedRange<Int>)
        /// One of these names.
        case choice([String])
        /// A broker URL, `mqtt://HOST:PORT` or `mqtts://HOST:PORT`.
        case brokerURL
        /// An array of strings.
        case texts
        /// A JSON object whose members are the keys named `<name>.<member>`.
        case object
        /// An object with a reader of its own (`notify`: `DeliverySettings`), whose
        /// members are not rows of this table; the text says what it holds.
        case section(String)

        /// The kind in words, for help text.
        package var description: String {
            switch self {
            case .text: "string"
            case .nonEmptyText: "non-empty string"
            case .path: "path"
            case .bool: "true or false"
            case .number(let range): "number \(Self.describe(range.lowerBound, range.upperBound < .greatestFiniteMagnitude ? range.upperBound : nil))"
            case .wholeNumber(let range): "whole number \(Self.describe(Double(range.lowerBound), range.upperBound < .max ? Double(range.upperBound) : nil))"
            case .choice(let names): names.joined(separator: " | ")
            case .brokerURL: "mqtt://HOST:PORT or mqtts://HOST:PORT"
            case .texts: "array of strings"
            case .object: "object"
            case .section(let what): "object: \(what)"
            }
        }

        private static func describe(_ lower: Double, _ upper: Double?) -> String {
            upper.map { "\(JSONWriter.text(of: lower))...\(JSONWriter.text(of: $0))" } ?? ">= \(JSONWriter.text(of: lower))"
        }
    }

    /// A command-line flag that sets the key: `--name PLACEHOLDER`. Only keys whose values
    /// are text (paths, URLs, names) have one.
    package struct Flag: Sendable, Equatable {
        /// The flag without its leading `--`.
        package var name: String
        /// What the value is, in the help: `FILE`, `URL`.
        package var placeholder: String
    }

    /// The key as written in the settings file; nested keys joined with dots.
    package let name: String
    package let kind: Kind
    /// The unit of a number ("m", "s", "bytes"), for help text.
    package let unit: String?
    /// What the key does, one or two sentences.
    package let help: String
    package let flag: Flag?
    /// The default in words, where the default value alone would not say it (a value
    /// that depends on the machine, or none at all).
    let defaultText: String?
    /// Checks `value` and writes it into the settings; for an object, what its presence
    /// sets (its members are read after it).
    let read: @Sendable (_ value: JSON, _ settings: inout Settings, _ source: SettingsSource) throws(SettingsError) -> Void
    /// The key's value in the settings, nil when unset.
    let value: @Sendable (Settings) -> JSON?

    /// The default, as the help shows it.
    package var defaultDescription: String {
        if let defaultText { return defaultText }
        return value(Settings()).map { JSONWriter().string($0) } ?? "none"
    }

    /// The key's value in `settings` as JSON, nil when unset.
    package func value(of settings: Settings) -> JSON? { value(settings) }

    /// Sets the key from the text given to its flag, checked as in a settings file (the
    /// flags are keys whose values are text: paths, URLs, names).
    func read(flagValue text: String, into settings: inout Settings) throws(SettingsError) {
        try read(.string(text), &settings, SettingsSource(origin: .flag(flag?.name ?? name)))
    }
}

extension SettingsKey {
    /// A key that reads a value with `check` and stores it at `keyPath`; `describe` writes
    /// the stored value back as JSON, for the default in the help.
    static func make<Value: Sendable>(
        _ name: String, _ kind: Kind, _ keyPath: WritableKeyPath<Settings, Value> & Sendable,
        unit: String? = nil, flag: Flag? = nil, defaultText: String? = nil, help: String,
        check: @escaping @Sendable (JSON, SettingsSource) throws(SettingsError) -> Value,
        describe: @escaping @Sendable (Value) -> JSON?
    ) -> SettingsKey {
        SettingsKey(
            name: name, kind: kind, unit: unit, help: help, flag: flag, defaultText: defaultText,
            read: { value, settings, source throws(SettingsError) in settings[keyPath: keyPath] = try check(value, source) },
            value: { describe($0[keyPath: keyPath]) })
    }

    /// Runs a `JSONField` read, turning its issue into a settings error.
    static func field<Value>(_ source: SettingsSource, _ read: () throws(FenceIssue) -> Value) throws(SettingsError) -> Value {
        do {
            return try read()
        } catch {
            throw source.error(error)
        }
    }

    static func text(_ name: String, _ keyPath: WritableKeyPath<Settings, String> & Sendable, flag: Flag? = nil, help: String) -> SettingsKey {
        make(name, .text, keyPath, flag: flag, help: help,
             check: { value, source throws(SettingsError) in try field(source) { () throws(FenceIssue) in try JSONField.string(value, key: name) } },
             describe: { .string($0) })
    }

    /// A string that is nil unless given, and must not be empty when given.
    static func optionalText(
        _ name: String, _ keyPath: WritableKeyPath<Settings, String?> & Sendable, defaultText: String? = nil, help: String
    ) -> SettingsKey {
        make(name, .nonEmptyText, keyPath, defaultText: defaultText, help: help,
             check: { value, source throws(SettingsError) in try nonEmpty(value, name: name, source: source) },
             describe: { $0.map(JSON.string) })
    }

    static func path(_ name: String, _ keyPath: WritableKeyPath<Settings, String> & Sendable, flag: Flag? = nil, help: String) -> SettingsKey {
        make(name, .path, keyPath, flag: flag, help: help,
             check: { value, source throws(SettingsError) in source.resolve(try nonEmpty(value, name: name, source: source)) },
             describe: { .string($0) })
    }

    /// A path that is nil unless given.
    static func optionalPath(_ name: String, _ keyPath: WritableKeyPath<Settings, String?> & Sendable, help: String) -> SettingsKey {
        make(name, .path, keyPath, help: help,
             check: { value, source throws(SettingsError) in source.resolve(try nonEmpty(value, name: name, source: source)) },
             describe: { $0.map(JSON.string) })
    }

    static func bool(_ name: String, _ keyPath: WritableKeyPath<Settings, Bool> & Sendable, help: String) -> SettingsKey {
        make(name, .bool, keyPath, help: help,
             check: { value, source throws(SettingsError) in try field(source) { () throws(FenceIssue) in try JSONField.bool(value, key: name) } },
             describe: { .bool($0) })
    }

    static func number(
        _ name: String, _ keyPath: WritableKeyPath<Settings, Double> & Sendable, atLeast minimum: Double, unit: String, help: String
    ) -> SettingsKey {
        let range = minimum...Double.greatestFiniteMagnitude
        return make(name, .number(range), keyPath, unit: unit, help: help,
                    check: { value, source throws(SettingsError) in
                        try field(source) { () throws(FenceIssue) in try JSONField.number(value, key: name, range: range) }
                    },
                    describe: { .number($0) })
    }

    static func wholeNumber(
        _ name: String, _ keyPath: WritableKeyPath<Settings, Int> & Sendable, atLeast minimum: Int, atMost maximum: Int = .max,
        unit: String? = nil, defaultText: String? = nil, help: String
    ) -> SettingsKey {
        let range = minimum...maximum
        return make(name, .wholeNumber(range), keyPath, unit: unit, defaultText: defaultText, help: help,
                    check: { value, source throws(SettingsError) in
                        try field(source) { () throws(FenceIssue) in try JSONField.wholeNumber(value, key: name, range: range) }
                    },
                    describe: { .number(Double($0)) })
    }

    /// One of `choices`, by name.
    static func choice<Value: Equatable & Sendable>(
        _ name: String, _ keyPath: WritableKeyPath<Settings, Value> & Sendable, _ choices: [(name: String, value: Value)],
        flag: Flag? = nil, help: String
    ) -> SettingsKey {
        make(name, .choice(choices.map(\.name)), keyPath, flag: flag, help: help,
             check: { value, source throws(SettingsError) in
                 try field(source) { () throws(FenceIssue) in try JSONField.choice(value, key: name, among: choices) }
             },
             describe: { current in choices.first { $0.value == current }.map { .string($0.name) } })
    }

    /// An object grouping the keys `<name>.<member>`; `present` sets what its mere
    /// presence means.
    static func object(_ name: String, help: String, present: @escaping @Sendable (inout Settings) -> Void = { _ in }) -> SettingsKey {
        SettingsKey(
            name: name, kind: .object, unit: nil, help: help, flag: nil, defaultText: nil,
            read: { _, settings, _ in present(&settings) }, value: { _ in nil })
    }

    /// A transition rule's default for every fence (`Settings.rules`), read as the fence
    /// file reads a fence's override of it.
    static func rule(_ rule: TransitionRule) -> SettingsKey {
        let kind: Kind = switch rule.field {
        case .number, .optionalNumber: .number(0...Double.greatestFiniteMagnitude)
        case .flag: .bool
        case .trigger: .choice(InitialTrigger.allCases.map(\.rawValue))
        }
        return SettingsKey(
            name: rule.rawValue, kind: kind, unit: rule.unit, help: rule.help, flag: nil, defaultText: rule.unsetMeaning,
            read: { value, settings, source throws(SettingsError) in
                try field(source) { () throws(FenceIssue) in try rule.decode(value, into: &settings.rules) }
            },
            value: { rule.encode($0.rules) })
    }

    /// A string that must not be empty.
    static func nonEmpty(_ value: JSON, name: String, source: SettingsSource) throws(SettingsError) -> String {
        let text = try field(source) { () throws(FenceIssue) in try JSONField.string(value, key: name) }
        guard !text.isEmpty else { throw source.error(FenceIssue(.invalidValue, "\"\(name)\" must not be empty (leave it out instead)")) }
        return text
    }
}
