import Testing
@testable import geotify

/// How a command's words are read, without running the binary: options with values and
/// switches as the command declares them, everything else an argument, and each misuse
/// a usage error naming the option.
@Suite("Command arguments")
struct ArgumentsTests {
    static let options = [
        CommandOption(name: "fences", placeholder: "FILE", help: ""),
        CommandOption(name: "radius", placeholder: "METRES", help: ""),
        CommandOption(name: "json", placeholder: nil, help: ""),
    ]

    func read(_ words: [String]) throws(UsageError) -> Arguments {
        try Arguments(words, command: "fences", options: Self.options)
    }

    func usageError(_ words: [String]) -> String? {
        do throws(UsageError) {
            _ = try read(words)
            return nil
        } catch {
            return error.message
        }
    }

    /// A value after the option or after '='; a word of two dashes alone, or one dash,
    /// is an argument, not an option without a name.
    @Test func valuesSwitchesAndArguments() throws {
        let arguments = try read(["a/b", "--fences", "f.json", "--radius=5", "--json", "--", "-"])
        #expect(arguments.value("fences") == "f.json" && arguments.value("radius") == "5" && arguments.isSet("json"))
        #expect(arguments.positionals == ["a/b", "--", "-"])
        #expect(try read(["--fences=a=b"]).value("fences") == "a=b", "only the first '=' splits")
    }

    @Test func aSwitchTakesNoValueAndAnOptionNeedsOne() {
        #expect(usageError(["--json=1"]) == "--json takes no value")
        #expect(usageError(["--fences"]) == "--fences needs a value", "the last word")
        #expect(usageError(["--fence", "x"]) == "unknown option --fence (did you mean --fences?)")
    }

    /// A number option takes a finite decimal number: not infinity, NaN or hex, which
    /// Double's own reading would take.
    @Test(arguments: ["inf", "-infinity", "nan", "0x10", "1e999", "five"])
    func aNumberIsAFiniteDecimal(text: String) throws {
        #expect(message { () throws(UsageError) in _ = try read(["--radius", text]).number("radius") } == "--radius must be a number, not \"\(text)\"")
    }

    @Test func argumentsWhereNoneAreTakenAreAUsageError() throws {
        #expect(message { () throws(UsageError) in try read(["--json", "extra"]).expectNoPositionals() } == "unexpected argument \"extra\"")
        #expect(message { () throws(UsageError) in try read(["--json"]).expectNoPositionals() } == nil)
        #expect(try read(["--radius", "-12.5"]).number("radius") == -12.5)
    }

    /// The message of the usage error `body` throws, nil when it throws none.
    func message(_ body: () throws(UsageError) -> Void) -> String? {
        do throws(UsageError) {
            try body()
            return nil
        } catch {
            return error.message
        }
    }
}
