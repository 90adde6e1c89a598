/// Random small edits of a text, for tests that compare two readers of untrusted input on
/// many near-valid variants of one payload: each edit replaces, removes or inserts one
/// byte drawn from an alphabet at a random position, reproducibly from a `SplitMix64`.
package enum RandomEdits {
    /// `text` with one to `maximum` edits of bytes from `alphabet`.
    package static func edited(_ text: [UInt8], alphabet: [UInt8], maximum: UInt64, _ generator: inout SplitMix64) -> [UInt8] {
        var text = text
        for _ in 0...(generator.next() % maximum) {
            let position = Int(generator.next() % UInt64(text.count + 1))
            let byte = alphabet[Int(generator.next() % UInt64(alphabet.count))]
            switch generator.next() % 3 {
            case 0 where position < text.count: text[position] = byte
            case 1 where position < text.count: text.remove(at: position)
            default: text.insert(byte, at: position)
            }
        }
        return text
    }
}
