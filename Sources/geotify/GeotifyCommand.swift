/// A subcommand of `geotify`: its name, its one line in the overview, its help, and what
/// runs it (returning the exit status). `main.swift` lists them; the overview, `help X`
/// and the suggestion for a misspelt command all come from that list. The help is a
/// closure: written out (wrapped options, every settings key) only when asked for, not
/// at every start, where it was most of a short command's own time.
struct GeotifyCommand {
    let name: String
    let summary: String
    let help: () -> String
    let run: ([String]) throws(UsageError) -> Int32
}
