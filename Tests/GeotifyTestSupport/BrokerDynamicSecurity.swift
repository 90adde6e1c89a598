import Foundation

/// mosquitto's dynamic-security plugin (`mosquitto_dynamic_security.so`) set up for one
/// restricted user, for tests of a broker that refuses subscriptions or publications: an `acl_file`
/// never does (mosquitto grants the SUBSCRIBE and drops at delivery what the client may
/// not read), while this plugin answers a filter the user's rules do not allow with a
/// SUBACK of 0x80 (MQTT 5: 0x87, not authorized). `user` logs in with `password` and
/// may do what `rules` allow (nothing else: subscribing and publishing are denied by
/// default); anonymous clients (a test's observers) may subscribe and publish anything.
package struct BrokerDynamicSecurity: Sendable {
    /// One entry of the user's role, as the plugin writes it: `allow` or deny `kind`
    /// (`subscribePattern`, `publishClientSend`, ...) on `topic`; of the entries that
    /// match, the one of highest `priority` decides.
    package struct Rule: Sendable {
        package var kind: String
        package var topic: String
        package var allow: Bool
        package var priority: Int

        /// Allows subscribing to the filters `pattern` covers.
        package static func subscribe(_ pattern: String) -> Rule {
            Rule(kind: "subscribePattern", topic: pattern, allow: true, priority: 0)
        }

        /// Refuses the subscription to the filters `pattern` covers, over any allowance.
        package static func refuseSubscribing(_ pattern: String) -> Rule {
            Rule(kind: "subscribePattern", topic: pattern, allow: false, priority: 1)
        }

        /// Allows publishing to the topics `pattern` covers.
        package static func publish(_ pattern: String) -> Rule {
            Rule(kind: "publishClientSend", topic: pattern, allow: true, priority: 0)
        }

        /// Refuses what is published to the topics `pattern` covers, over any allowance:
        /// an MQTT 5 client's QoS 1 message there gets a PUBACK of 0x87 (not authorized),
        /// an MQTT 3.1.1 client's a plain PUBACK, and the message is dropped either way.
        package static func refusePublishing(_ pattern: String) -> Rule {
            Rule(kind: "publishClientSend", topic: pattern, allow: false, priority: 1)
        }
    }

    /// Where the plugin's configuration is.
    package let path: String
    /// The plugin's library.
    package let plugin: String

    /// Writes the plugin's configuration at `path`. The password is hashed by
    /// `mosquitto_ctrl dynsec init`, whose file's client is then given `user`'s name and
    /// `rules`. Throws when the plugin or `mosquitto_ctrl` is not installed.
    package init(path: String, user: String, password: String, rules: [Rule]) throws {
        guard let plugin = Self.findPlugin() else {
            throw TestSupportError("mosquitto_dynamic_security.so not found (the mosquitto package installs it)")
        }
        self.path = path
        self.plugin = plugin
        let initial = path + ".init"
        defer { try? FileManager.default.removeItem(atPath: initial) }
        _ = try runCommand("mosquitto_ctrl", ["dynsec", "init", initial, user, password])
        guard let made = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: initial))) as? [String: Any],
              var client = (made["clients"] as? [[String: Any]])?.first else {
            throw TestSupportError("mosquitto_ctrl dynsec init wrote no client to \(initial)")
        }
        client["roles"] = [["rolename": "restricted"]]
        let everything: [[String: Any]] = [
            ["acltype": "subscribePattern", "topic": "#", "allow": true],
            ["acltype": "publishClientSend", "topic": "#", "allow": true],
        ]
        let configuration: [String: Any] = [
            "defaultACLAccess": ["publishClientSend": false, "publishClientReceive": true, "subscribe": false, "unsubscribe": true],
            "clients": [client],
            "groups": [["groupname": "anonymous", "roles": [["rolename": "everything"]]]],
            "anonymousGroup": "anonymous",
            "roles": [
                ["rolename": "restricted", "acls": rules.map {
                    ["acltype": $0.kind, "topic": $0.topic, "allow": $0.allow, "priority": $0.priority] as [String: Any]
                }],
                ["rolename": "everything", "acls": everything],
            ],
        ]
        try JSONSerialization.data(withJSONObject: configuration, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: path))
    }

    /// The mosquitto options that load the plugin with this configuration, for
    /// `TestBroker(extraConfig:)`.
    package var brokerConfig: String {
        "plugin \(plugin)\nplugin_opt_config_file \(path)\n"
    }

    /// The plugin's library where Debian (by architecture) or a build from source puts it.
    private static func findPlugin() -> String? {
        let name = "mosquitto_dynamic_security.so"
        let multiarch = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? [])
            .filter { $0.hasSuffix("-linux-gnu") }.sorted().map { "/usr/lib/\($0)" }
        return (multiarch + ["/usr/lib", "/usr/local/lib", "/usr/lib64"])
            .map { "\($0)/\(name)" }
            .first { FileManager.default.fileExists(atPath: $0) }
    }
}
