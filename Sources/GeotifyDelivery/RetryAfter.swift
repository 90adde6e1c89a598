import Foundation
/// Reads an HTTP `Retry-After` header (RFC 9110): a number of seconds (`120`) or an
/// HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`), as seconds from `now`.
package enum RetryAfter {
    /// The longest wait taken from a header: a hundred years, only to keep the numbers
    /// finite. The wait is what the target asked, so a message can say so; the retry window
    /// (at most 30 days) decides how long is waited: a wait past its end moves the last
    /// attempt to the end.
    package static let longest: Double = 100 * 365 * 86_400

    /// The wait `value` asks for, from 0 to `longest`, or nil when it is neither form.
    package static func seconds(_ value: String, now: Double) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard text.count <= 12, let seconds = Double(text) else { return longest }
            return min(seconds, longest)
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, min(date - now, longest))
    }

    /// The seconds since 1970 of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the
    /// form RFC 9110 requires senders to use.
    static func httpDate(_ text: String) -> Double? {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let words = text.split(separator: " ")
        guard words.count == 6, words[0].hasSuffix(","), words[5] == "GMT",
              let day = Int(words[1]), (1...31).contains(day),
              let month = months.firstIndex(of: String(words[2])),
              let year = Int(words[3]), (1970...9999).contains(year)
        else { return nil }
        let clock = words[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = CalendarTime.days(year: year, month: month + 1, day: day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second)
    }
}
