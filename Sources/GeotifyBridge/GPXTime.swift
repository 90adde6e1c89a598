/// A GPX `<time>`: an ISO 8601 / XML Schema date-time, `2023-11-14T22:13:20Z`, with
/// optional fractional seconds and a `Z` or `±hh:mm` offset (none means UTC, as GPX
/// prescribes UTC anyway). Read without Foundation's date formatters, so a GPX file
/// costs no locale machinery and a hostile one cannot reach any.
enum GPXTime {
    /// Seconds since 1970 for `text`, or nil when it is not such a time.
    static func seconds(_ text: String) -> Double? {
        let characters = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= characters.count else { return nil }
            var value = 0
            for byte in characters[index..<(index + digits)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += digits
            return value
        }
        func skip(_ separators: [UInt8]) -> Bool {
            guard index < characters.count, separators.contains(characters[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip([UInt8(ascii: "-")]), let month = number(2), skip([UInt8(ascii: "-")]), let day = number(2),
              skip([UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")]),
              let hour = number(2), skip([UInt8(ascii: ":")]), let minute = number(2), skip([UInt8(ascii: ":")]), let second = number(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second <= 60
        else { return nil }
        var fraction = 0.0
        if skip([UInt8(ascii: "."), UInt8(ascii: ",")]) {
            var scale = 0.1
            let start = index
            // Any number of digits, as XML Schema allows; past the twelfth (a picosecond)
            // they add nothing a Double keeps.
            while index < characters.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(characters[index]) {
                if index - start < 12 {
                    fraction += Double(characters[index] - UInt8(ascii: "0")) * scale
                    scale /= 10
                }
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if skip([UInt8(ascii: "Z"), UInt8(ascii: "z")]) {
            offset = 0
        } else if index < characters.count, let sign = [UInt8(ascii: "+"): 1, UInt8(ascii: "-"): -1][characters[index]] {
            index += 1
            guard let hours = number(2), skip([UInt8(ascii: ":")]), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard index == characters.count else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }

    /// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar
    /// (Howard Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
