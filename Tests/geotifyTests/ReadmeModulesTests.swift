import Foundation
import Testing

/// The README's table of modules says what each module depends on; Package.swift says
/// it for the build. A dependency added to one and not the other would make the table,
/// part of the architecture section, a description of some other code.
@Suite("The README's modules")
struct ReadmeModulesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theTableNamesEveryModuleWithTheDependenciesPackageSwiftGivesIt() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let table = try ReadmeModules.table(readme)
        let targets = ReadmeModules.targets(manifest)
        #expect(!table.isEmpty && targets.count >= 10, "both read: \(table.count) rows, \(targets.count) targets")
        #expect(Set(table.keys) == Set(targets.keys), "the table lists the modules in Sources/ that are not C wrappers")
        for (module, dependencies) in targets {
            #expect(table[module] == dependencies, "\(module): the README says \(table[module] ?? []), Package.swift \(dependencies)")
        }
    }

    @Test func theReadersFindWhatTheyAreGiven() throws {
        let readme = """
            | module | what | depends on |
            |---|---|---|
            | `GeotifyJSON` | a parser | none |
            | `geotify` | the command line | Bridge, CSQLite |
            """
        #expect(try ReadmeModules.table(readme) == ["GeotifyJSON": [], "geotify": ["GeotifyBridge", "CSQLite"]])
        let manifest = """
            .target(name: "CPrefetch"),
            .target(name: "GeotifyCore", dependencies: ["CPrefetch"]),
            .target(
                name: "GeotifyConsole",
                dependencies: ["GeotifyHTTP", "GeotifyCore"],
                resources: [.embedInCode("Page/index.html")]
            ),
            .target(name: "GeotifyTestSupport", dependencies: ["GeotifyMQTT"], path: "Tests/GeotifyTestSupport"),
            .executableTarget(name: "geotify", dependencies: ["GeotifyBridge"]),
            .testTarget(name: "GeotifyCoreTests", dependencies: ["GeotifyCore"]),
            """
        #expect(ReadmeModules.targets(manifest) == [
            "GeotifyCore": ["CPrefetch"], "GeotifyConsole": ["GeotifyHTTP", "GeotifyCore"], "geotify": ["GeotifyBridge"],
        ])
    }
}

/// Reads the README's table of modules and Package.swift's targets, each as module name
/// → the names of the targets it depends on.
enum ReadmeModules {
    /// The rows of the table headed `| module | what | depends on |`: the README
    /// abbreviates `GeotifyX` as `X` in the last column and writes `none` for no
    /// dependency.
    static func table(_ readme: String) throws -> [String: Set<String>] {
        let lines = readme.components(separatedBy: "\n")
        guard let header = lines.firstIndex(of: "| module | what | depends on |") else { return [:] }
        var rows: [String: Set<String>] = [:]
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("| `") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = cells.first, let last = cells.last else { continue }
            let module = first.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let names = last == "none" ? [] : last.components(separatedBy: ", ")
            rows[module] = Set(names.map(fullName))
        }
        return rows
    }

    /// `Core` → `GeotifyCore`; a C target (`CSQLite`) as it is.
    static func fullName(_ abbreviation: String) -> String {
        isC(abbreviation) ? abbreviation : "Geotify" + abbreviation
    }

    /// Whether `name` is a C target's: `C` and a capital letter.
    static func isC(_ name: String) -> Bool {
        let characters = Array(name)
        return characters.count > 1 && characters[0] == "C" && characters[1].isUppercase
    }

    /// The `.target` and `.executableTarget` entries of the manifest that are the
    /// package's own modules: not the C targets, nor those under Tests/.
    static func targets(_ manifest: String) -> [String: Set<String>] {
        var targets: [String: Set<String>] = [:]
        for opening in [".target(", ".executableTarget("] {
            var searchStart = manifest.startIndex
            while let found = manifest.range(of: opening, range: searchStart..<manifest.endIndex) {
                let block = balanced(manifest, from: found.upperBound)
                searchStart = block.endIndex
                guard let name = value(of: "name", in: block), !isC(name),
                      !(value(of: "path", in: block)?.hasPrefix("Tests/") ?? false)
                else { continue }
                var dependencies: Set<String> = []
                if let list = block.range(of: "dependencies: ["), let end = block.range(of: "]", range: list.upperBound..<block.endIndex) {
                    dependencies = Set(quoted(block[list.upperBound..<end.lowerBound]))
                }
                targets[name] = dependencies
            }
        }
        return targets
    }

    /// The text from `start` up to the parenthesis that closes the one before it.
    private static func balanced(_ text: String, from start: String.Index) -> Substring {
        var depth = 1
        var index = start
        var inString = false
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" { inString.toggle() }
            if !inString {
                if character == "(" { depth += 1 }
                if character == ")" { depth -= 1 }
                if depth == 0 { return text[start..<index] }
            }
            index = text.index(after: index)
        }
        return text[start..<text.endIndex]
    }

    /// The string after `label: "` in `block`.
    private static func value(of label: String, in block: Substring) -> String? {
        guard let found = block.range(of: "\(label): \"") else { return nil }
        return block[found.upperBound...].prefix { $0 != "\"" }.description
    }

    /// Every string literal in `text`.
    private static func quoted(_ text: Substring) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}
