/// TLS settings for a broker connection (mqtts://).
///
/// With neither `caFile` nor `caPath` the operating system's trusted certificates are
/// used. A client certificate takes `certFile` and `keyFile` together.
package struct MQTTTLS: Sendable, Equatable {
    /// A PEM file of CA certificates that may sign the broker's certificate.
    package var caFile: String?
    /// A directory of hashed PEM CA certificates (as made by `openssl rehash`).
    package var caPath: String?
    /// The PEM certificate this client presents, if the broker asks for one.
    package var certFile: String?
    /// The unencrypted PEM private key of `certFile`.
    package var keyFile: String?
    /// Skips every check of the broker's certificate and host name. For testing only:
    /// it makes the encryption worthless against an active attacker.
    package var insecure: Bool

    /// Creates TLS settings; every field defaults to "not set" and verification on.
    package init(
        caFile: String? = nil,
        caPath: String? = nil,
        certFile: String? = nil,
        keyFile: String? = nil,
        insecure: Bool = false
    ) {
        self.caFile = caFile
        self.caPath = caPath
        self.certFile = certFile
        self.keyFile = keyFile
        self.insecure = insecure
    }
}
