import Foundation
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore

/// How the bridge proves who it is to the broker and checks who the broker is: user name
/// and password, TLS files, and the MQTT protocol version. It is kept apart from the
/// other settings because the password must never be required on a command line or in
/// a file anyone can read, so it is looked up only when the bridge starts, from the
/// first of these that is set:
///
/// 1. the environment variable `GEOTIFY_MQTT_PASSWORD` (not empty), e.g. from a systemd
///    `EnvironmentFile`;
/// 2. `passwordFile`: a file holding the password (one trailing line break is ignored),
///    e.g. a systemd credential;
/// 3. `password` in the settings file itself (discouraged: it warns).
///
/// TLS is used when the broker URL is `mqtts://`; the `tls` object then names the CA
/// (`caFile`, `caPath`; the system's CAs when neither is given), an optional client
/// certificate (`certFile` with `keyFile`) and, for testing only, `insecure` (no
/// certificate or host name checks). A `tls` object with an `mqtt://` URL is an error
/// rather than silently ignored.
public struct BrokerSecurity: Sendable, Equatable {
    /// The settings keys it reads.
    public static let keys = ["username", "password", "passwordFile", "tls", "protocol"]
    /// The keys of the `tls` object.
    public static let tlsKeys = ["caFile", "caPath", "certFile", "keyFile", "insecure"]
    /// The environment variable that, when set and not empty, holds the password.
    public static let passwordVariable = "GEOTIFY_MQTT_PASSWORD"

    /// The user name sent in CONNECT, if any.
    public var username: String?
    /// The password as written in the settings file.
    public var password: String?
    /// A file whose contents are the password.
    public var passwordFile: String?
    /// The TLS settings given (paths resolved); nil means the defaults: the system's
    /// CAs, every check on.
    public var tls: MQTTTLS?
    /// The MQTT version spoken: `"3.1.1"` (the default) or `"5"`.
    public var protocolVersion = MQTTProtocolVersion.v311

    /// No credentials, default TLS, MQTT 3.1.1.
    public init() {}

    /// Reads the keys above from a settings file's object; `file` names it in errors and
    /// relative paths are resolved against `base`, the file's directory.
    public init(settings object: JSONObject, file: String, base: String) throws(SettingsError) {
        let reader = SettingsReader(object: object, file: file)
        username = try reader.nonEmptyString("username")
        password = try reader.nonEmptyString("password")
        passwordFile = try reader.nonEmptyString("passwordFile").map { SettingsReader.resolve($0, against: base) }
        if password != nil, passwordFile != nil {
            throw SettingsError("\(file): give either \"password\" or \"passwordFile\", not both")
        }
        if let name = try reader.nonEmptyString("protocol") {
            switch name {
            case "3.1.1": protocolVersion = .v311
            case "5": protocolVersion = .v5
            default: throw SettingsError("\(file): \"protocol\" must be \"3.1.1\" or \"5\", not \"\(name)\"")
            }
        }
        if let value = object["tls"] {
            guard case .object(let tlsObject) = value else {
                throw SettingsError("\(file): \"tls\" must be an object with \(Self.tlsKeys.joined(separator: ", ")), not \(value.kindDescription)")
            }
            for key in tlsObject.keys where !Self.tlsKeys.contains(key) {
                throw SettingsError("\(file): unknown key \"tls.\(key)\" (known keys: \(Self.tlsKeys.joined(separator: ", ")))")
            }
            let tlsReader = SettingsReader(object: tlsObject, file: file, prefix: "tls.")
            let path = { (key: String) throws(SettingsError) -> String? in
                try tlsReader.nonEmptyString(key).map { SettingsReader.resolve($0, against: base) }
            }
            let tls = MQTTTLS(
                caFile: try path("caFile"), caPath: try path("caPath"), certFile: try path("certFile"),
                keyFile: try path("keyFile"), insecure: try tlsReader.bool("insecure") ?? false)
            if (tls.certFile == nil) != (tls.keyFile == nil) {
                throw SettingsError("\(file): \"tls.certFile\" and \"tls.keyFile\" must be given together")
            }
            self.tls = tls
        }
    }

    /// Sets the protocol version, TLS and credentials of `options` for `broker`, reading
    /// the password as described above from `environment`. Returns warnings to log (a
    /// password in the settings file or in a file others can read, a password sent
    /// unencrypted to another host, certificate checks off); throws when the
    /// combination cannot work or the password file cannot be read.
    public func configure(
        _ options: inout MQTTOptions, broker: BrokerAddress,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SettingsError) -> [String] {
        var warnings: [String] = []
        options.protocolVersion = protocolVersion
        if broker.tls {
            options.tls = tls ?? MQTTTLS()
            if options.tls?.insecure == true {
                warnings.append("TLS certificate and host name checks are off (\"tls.insecure\"): for testing only")
            }
        } else if tls != nil {
            throw SettingsError("\"tls\" is set but the broker \(broker) is not mqtts://: use an mqtts:// URL to connect with TLS")
        }
        let password: String?
        if let variable = environment[Self.passwordVariable], !variable.isEmpty {
            password = variable
        } else if let passwordFile {
            password = try Self.readPassword(passwordFile, warnings: &warnings)
        } else {
            password = self.password
            if password != nil {
                warnings.append("the broker password is written in the settings file; prefer \"passwordFile\" or \(Self.passwordVariable)")
            }
        }
        if password != nil, username == nil {
            throw SettingsError("a broker password is given (\(Self.passwordVariable), \"passwordFile\" or \"password\") but no \"username\"")
        }
        if password != nil, !broker.tls, !Self.isLoopback(broker.host) {
            warnings.append("the broker password goes unencrypted to \(broker); use mqtts://")
        }
        options.username = username
        options.password = password
        return warnings
    }

    /// The password in `path`: its contents less one trailing line break.
    private static func readPassword(_ path: String, warnings: inout [String]) throws(SettingsError) -> String {
        let bytes: [UInt8]
        do {
            guard let read = try AtomicFile.read(path) else {
                throw SettingsError("cannot read the broker password file \(path): no such file")
            }
            bytes = read
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError("cannot read the broker password file \(path): \(error)")
        }
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\r\n") {
            text.removeLast(2)
        } else if text.hasSuffix("\n") {
            text.removeLast()
        }
        guard !text.isEmpty else {
            throw SettingsError("the broker password file \(path) is empty")
        }
        guard !text.contains("\n") else {
            throw SettingsError("the broker password file \(path) holds more than one line; it must hold only the password")
        }
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & 0o004 != 0 {
            warnings.append("the broker password file \(path) is readable by every user; chmod o-r it")
        }
        return text
    }

    private static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
