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
/// rather than silently ignored. The TLS files are checked before libmosquitto sees
/// them, as every file an operator names is read: a missing one, one that is not a
/// regular file (a FIFO would block the start, since libmosquitto opens it to check it)
/// or one that cannot be read is refused naming its key and path; `caPath` must be a
/// directory.
package struct BrokerSecurity: Sendable, Equatable {
    /// The environment variable that, when set and not empty, holds the password.
    package static let passwordVariable = "GEOTIFY_MQTT_PASSWORD"

    /// The user name sent in CONNECT, if any.
    package var username: String?
    /// The password as written in the settings file.
    package var password: String?
    /// A file whose contents are the password.
    package var passwordFile: String?
    /// The TLS settings given (paths resolved); nil means the defaults: the system's
    /// CAs, every check on.
    package var tls: MQTTTLS?
    /// The MQTT version spoken: `"3.1.1"` (the default) or `"5"`.
    package var protocolVersion = MQTTProtocolVersion.v311

    /// No credentials, default TLS, MQTT 3.1.1.
    package init() {}

    /// Checks the combination of values (`Settings.keys` reads them one by one): a
    /// password written two ways, a client certificate without its key. `file` names
    /// where they came from in the error.
    package func validate(file: String) throws(SettingsError) {
        if password != nil, passwordFile != nil {
            throw SettingsError("\(file): give either \"password\" or \"passwordFile\", not both")
        }
        if let tls, (tls.certFile == nil) != (tls.keyFile == nil) {
            throw SettingsError("\(file): \"tls.certFile\" and \"tls.keyFile\" must be given together")
        }
    }

    /// Sets the protocol version, TLS and credentials of `options` for `broker`, reading
    /// the password as described above from `environment`. Returns warnings to log (a
    /// password in the settings file or in a file others can read, a password sent
    /// unencrypted to another host, certificate checks off); throws when the
    /// combination cannot work or the password file cannot be read.
    package func configure(
        _ options: inout MQTTOptions, broker: BrokerAddress,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SettingsError) -> [String] {
        var warnings: [String] = []
        options.protocolVersion = protocolVersion
        if broker.tls {
            if let tls { try Self.checkFiles(of: tls) }
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
            guard let read = try AtomicFile.read(path, within: .secret) else {
                throw SettingsError("cannot read the broker password file \(path): no such file")
            }
            bytes = read
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError("cannot read the broker password file \(path): \(error)")
        }
        // A leading byte order mark is no part of the password.
        var text = String(decoding: ByteOrderMark.dropped(from: bytes), as: UTF8.self)
        // `\r\n` is one Character in Swift, so one removeLast takes either line break.
        if text.hasSuffix("\r\n") || text.hasSuffix("\n") {
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

    /// Refuses a TLS file of `tls` that libmosquitto could not use, before it opens it:
    /// each file is read as every file an operator names is (regular files only, within
    /// `FileSizeLimit.certificate`), and `caPath` must be a directory that can be opened.
    private static func checkFiles(of tls: MQTTTLS) throws(SettingsError) {
        for (key, path) in [("tls.caFile", tls.caFile), ("tls.certFile", tls.certFile), ("tls.keyFile", tls.keyFile)] {
            guard let path else { continue }
            let read: [UInt8]?
            do {
                read = try AtomicFile.read(path, within: .certificate)
            } catch {
                throw SettingsError("cannot read the broker TLS file \"\(key)\" \(path): \(error)")
            }
            guard read != nil else { throw SettingsError("cannot read the broker TLS file \"\(key)\" \(path): no such file") }
        }
        if let path = tls.caPath {
            // Without waiting, and never a FIFO: O_DIRECTORY refuses anything else unopened.
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else {
                let reason = switch errno {
                case ENOENT: "no such directory"
                case ENOTDIR: "not a directory"
                default: String(cString: strerror(errno))
                }
                throw SettingsError("cannot read the broker TLS directory \"tls.caPath\" \(path): \(reason)")
            }
            close(descriptor)
        }
    }

    private static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
