import CCrypto

/// SHA-256 and HMAC-SHA256 from OpenSSL's libcrypto (which libcurl already loads for
/// TLS): audited, constant-time code instead of a hand-written hash. For webhook
/// signatures and for stable e-mail Message-IDs.
package enum Digest {
    /// HMAC-SHA256 of `message` under `key` (32 bytes), or nil when libcrypto fails.
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = key.withUnsafeBufferPointer { key in
            message.withUnsafeBufferPointer { message in
                HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), message.baseAddress, message.count, &digest, &length)
            }
        }
        guard result != nil, length == 32 else { return nil }
        return Array(digest.prefix(32))
    }

    /// SHA-256 of `bytes` (32 bytes), or nil when libcrypto fails.
    package static func sha256(_ bytes: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let status = bytes.withUnsafeBufferPointer { bytes in
            EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_sha256(), nil)
        }
        guard status == 1, length == 32 else { return nil }
        return Array(digest.prefix(32))
    }

    /// Lower-case hexadecimal.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
