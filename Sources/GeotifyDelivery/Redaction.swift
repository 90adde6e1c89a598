import Foundation
import GeotifyJSON

/// What is blanked out of a target's answers before they are stored or shown: every form
/// in which the bridge sends one of the target's secrets, each with the secret's
/// description in its place. A service that echoes the request in an error answer echoes
/// it in the form it got: the literal token of a header or URL, the percent- or
/// form-encoded token of a form body, the base64 of a Basic credential or an SMTP login
/// (`Destination.redaction` lists them per destination).
///
/// A text cut short (an excerpt of a long answer) can end in the first part of a form;
/// `blankingCutEnd` blanks that part too, so no piece of a secret survives a cut.
package struct Redaction: Sendable, Equatable {
    /// One text to blank out, and what shows instead.
    package struct Form: Sendable, Equatable {
        package var text: String
        package var replacement: String

        package init(_ text: String, replacement: String) {
            self.text = text
            self.replacement = replacement
        }
    }

    /// The forms, each text once, longest first: a long form is blanked whole before a
    /// shorter one inside it (the literal inside its JSON-escaped form) could cut it up.
    package let forms: [Form]

    package init(_ forms: [Form]) {
        var seen = Set<String>()
        self.forms = forms.filter { !$0.text.isEmpty && seen.insert($0.text).inserted }
            .sorted { $0.text.utf8.count > $1.text.utf8.count }
    }

    /// Nothing to blank out.
    package static let none = Redaction([])

    /// The UTF-8 length of the longest form: how far past a cut a form that starts before
    /// it may reach.
    package var longestUTF8: Int { forms.first?.text.utf8.count ?? 0 }

    /// `text` with every whole form replaced.
    package func apply(_ text: String) -> String {
        forms.reduce(text) { $0.replacingOccurrences(of: $1.text, with: $1.replacement) }
    }

    /// `text`, which was cut short, with the longest start of a form at its end (what the
    /// cut left of a secret) replaced as a whole form is.
    package func blankingCutEnd(_ text: String) -> String {
        let characters = Array(text)
        var best: (length: Int, replacement: String)?
        for form in forms {
            let start = Array(form.text.prefix(characters.count))
            var length = min(start.count, form.text.count - 1)
            while length > (best?.length ?? 0) {
                if start[length - 1] == characters[characters.count - 1], characters.suffix(length).elementsEqual(start.prefix(length)) {
                    best = (length, form.replacement)
                    break
                }
                length -= 1
            }
        }
        guard let best else { return text }
        return String(characters.dropLast(best.length)) + best.replacement
    }

    /// The redaction with `transform` applied to each form's text, for text that went
    /// through `transform` too.
    package func mapped(_ transform: (String) -> String) -> Redaction {
        Redaction(forms.map { Form(transform($0.text), replacement: $0.replacement) })
    }
}
