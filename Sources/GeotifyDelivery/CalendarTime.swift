/// A moment as a UTC calendar date and time, computed without Foundation's formatters:
/// for the `{time}` of message templates (ISO 8601) and an e-mail's `Date:` header
/// (RFC 5322), the same on every platform and in every locale.
package struct CalendarTime: Sendable, Equatable {
    package var year: Int
    package var month: Int
    package var day: Int
    package var hour: Int
    package var minute: Int
    package var second: Int
    /// 0 for Sunday through 6 for Saturday.
    package var weekday: Int

    /// The UTC calendar time of `seconds` since 1970, rounded down to the second.
    package init(seconds: Double) {
        let whole = Int64(max(-1e15, min(1e15, seconds)).rounded(.down))
        var days = whole / 86_400
        var rest = whole % 86_400
        if rest < 0 {
            rest += 86_400
            days -= 1
        }
        hour = Int(rest / 3600)
        minute = Int(rest % 3600 / 60)
        second = Int(rest % 60)
        weekday = Int(((days % 7) + 11) % 7)
        // Howard Hinnant's civil_from_days.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
    }

    /// Days from 1970-01-01 to the date (Howard Hinnant's days_from_civil).
    package static func days(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `2023-11-14T22:13:20Z`.
    package var iso8601: String {
        "\(pad(year, 4))-\(pad(month))-\(pad(day))T\(pad(hour)):\(pad(minute)):\(pad(second))Z"
    }

    /// `Tue, 14 Nov 2023 22:13:20 +0000`.
    package var rfc5322: String {
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(weekdays[weekday]), \(day) \(months[month - 1]) \(pad(year, 4)) \(pad(hour)):\(pad(minute)):\(pad(second)) +0000"
    }

    private func pad(_ number: Int, _ width: Int = 2) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
