import Foundation
import Testing
import GeotifyCore
import GeotifyJSON
import GeotifyStore

@Suite("Fence changes")
struct FenceChangeTests {
    let directory = TemporaryDirectory()

    static let text = """
        {"devices": {"alice/phone": [
          {"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "Welcome home", "eventType": "onEntry"},
          {"identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150, "eventType": "onExit"}
        ]}}
        """

    static let book = FenceFile(path: "fences.json").parse(Array(text.utf8)).book!

    static func fence(_ identifier: String, radius: Double = 50) -> JSON {
        ["identifier": .string(identifier), "latitude": 52.5, "longitude": 13.4, "radius": .number(radius), "eventType": "onEntry"]
    }

    static func patch(_ json: JSON) -> JSONObject {
        json.objectValue ?? JSONObject()
    }

    func apply(_ change: FenceChange, to book: FenceBook = FenceChangeTests.book, limits: FenceLimits = FenceLimits()) throws -> FenceChange.Applied {
        try change.apply(to: book, limits: limits)
    }

    func refusal(_ change: FenceChange, to book: FenceBook = FenceChangeTests.book, limits: FenceLimits = FenceLimits()) -> FenceChangeError? {
        do {
            _ = try change.apply(to: book, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    // MARK: add

    @Test func addAppendsTheFenceToTheDevicesList() throws {
        let applied = try apply(.add(device: "alice/phone", fence: Self.fence("gym")))
        #expect(applied.book.fences(of: "alice/phone").map(\.identifier) == ["home", "office", "gym"])
        #expect(applied.fence?.identifier == "gym")
        #expect(applied.fence?.addedRevision == 0)
        #expect(applied.previous == nil)
        #expect(applied.warnings.isEmpty)
    }

    @Test func addToADeviceNotInTheFileCreatesIt() throws {
        let applied = try apply(.add(device: "van/7", fence: Self.fence("depot")))
        #expect(applied.book.fences(of: "van/7").map(\.identifier) == ["depot"])
        #expect(applied.book.fences(of: "alice/phone") == Self.book.fences(of: "alice/phone"))
    }

    @Test func addRefusesAnIdentifierTheDeviceHas() {
        let error = refusal(.add(device: "alice/phone", fence: Self.fence("home")))
        #expect(error?.code == .duplicateIdentifier)
        #expect(error?.message == #"device "alice/phone" already has a fence "home"; identifiers must be unique per device"#)
    }

    @Test func addOverTheFenceLimitIsRefusedNamingTheLimit() {
        let error = refusal(.add(device: "alice/phone", fence: Self.fence("gym")), limits: FenceLimits(maximumFencesPerDevice: 2))
        #expect(error?.code == .fenceLimit)
        #expect(error?.message == #"device "alice/phone" would have 3 fences, but a device may have at most 2 (maximumFencesPerDevice)"#)
    }

    @Test func invalidValuesAreRefusedWithEveryProblemFenceCodecFinds() {
        let error = refusal(.add(device: "alice/phone", fence: [
            "identifier": "gym", "latitude": 95, "longitude": "abc", "radius": 10, "eventType": "onEntry",
        ]))
        #expect(error?.code == .outOfRange)
        #expect(error?.problems.map(\.description) == [
            #"device "alice/phone", fence "gym": latitude 95 is outside -90...90"#,
            #"device "alice/phone", fence "gym": "longitude" must be a number, not a string"#,
        ])
        #expect(error?.message == #"device "alice/phone", fence "gym": latitude 95 is outside -90...90; device "alice/phone", fence "gym": "longitude" must be a number, not a string"#)
    }

    /// A key given twice gets the code a message naming a field twice gets over MQTT
    /// (one vocabulary), whichever way the fence came.
    @Test func aKeyGivenTwiceIsADuplicateField() {
        let error = refusal(.add(device: "alice/phone", fence: [
            "identifier": "gym", "latitude": 1, "longitude": 2, "radius": 10, "radius": 50, "eventType": "onEntry",
        ]))
        #expect(error?.code == .duplicateField)
        #expect(error?.problems.map(\.description) == [#"device "alice/phone", fence "gym": the key "radius" appears more than once"#])
    }

    @Test func aFenceWithoutIdentifierIsNamedByItsDevice() {
        let error = refusal(.add(device: "d", fence: ["latitude": 1, "longitude": 2, "radius": 5, "eventType": "onExit"]))
        #expect(error?.code == .missingField)
        #expect(error?.problems.map(\.description) == [#"device "d": missing "identifier""#])
    }

    @Test func anUnusableDeviceIdentifierIsRefused() {
        let error = refusal(.add(device: "alice/+", fence: Self.fence("gym")))
        #expect(error?.code == .invalidDevice)
        #expect(error?.message == #"the device identifier "alice/+" must not contain '+' or '#'"#)
    }

    @Test func controlCharactersInIdentifiersAndNotesAreRefused() {
        let newline = refusal(.add(device: "alice/phone", fence: Self.fence("gym\nfake log line")))
        #expect(newline?.code == .invalidValue)
        #expect(newline?.problems.map(\.description) == [
            #"device "alice/phone", fence "gym\#nfake log line": a fence identifier must not contain control characters, non-characters or invalid UTF-8; found U+000A (a control character) at byte 3"#,
        ])
        var noted = Self.fence("gym").objectValue ?? JSONObject()
        noted["note"] = "Leg day\u{0}"
        let note = refusal(.add(device: "alice/phone", fence: .object(noted)))
        #expect(note?.code == .invalidValue)
        #expect(note?.message.hasSuffix(#""note" must not contain control characters, non-characters or invalid UTF-8; found U+0000 (a control character) at byte 7"#) == true)
        let device = refusal(.add(device: "alice/\u{1B}[2J", fence: Self.fence("gym")))
        #expect(device?.code == .invalidDevice)
        #expect(device?.message == "a device identifier must not contain control characters, non-characters or invalid UTF-8; found U+001B (a control character) at byte 6")
    }

    @Test func aRadiusOutsideTheLimitsIsClampedWithAWarning() throws {
        let applied = try apply(.add(device: "alice/phone", fence: Self.fence("gym", radius: 0)))
        #expect(applied.fence?.region == .circle(center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 1))
        #expect(applied.warnings.map(\.description) == [
            #"device "alice/phone", fence "gym": radius 0 m clamped to 1 m (allowed 1...100000 m)"#,
        ])
    }

    // MARK: edit

    @Test func editReplacesOnlyTheGivenFieldsInPlace() throws {
        let applied = try apply(.edit(device: "alice/phone", identifier: "home", fields: Self.patch(["note": "Hi", "radius": 120])))
        let fences = applied.book.fences(of: "alice/phone")
        #expect(fences.map(\.identifier) == ["home", "office"])
        #expect(fences[0].note == "Hi")
        #expect(fences[0].region == .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 120))
        #expect(fences[0].eventType == .onEntry)
        #expect(fences[1] == Self.book.fences(of: "alice/phone")[1])
        #expect(applied.fence == fences[0])
        #expect(applied.previous == Self.book.fences(of: "alice/phone")[0])
    }

    @Test func editKeepsTheRevisionTheFenceWasAddedIn() throws {
        let revised = Self.book.revised(from: FenceBook())
        let applied = try apply(.edit(device: "alice/phone", identifier: "home", fields: Self.patch(["note": "Hi"])), to: revised)
        #expect(applied.fence?.addedRevision == 1)
        #expect(applied.book.revision == 1)
    }

    @Test func editRenamesWithAnIdentifierField() throws {
        let applied = try apply(.edit(device: "alice/phone", identifier: "home", fields: Self.patch(["identifier": "house"])))
        #expect(applied.book.fences(of: "alice/phone").map(\.identifier) == ["house", "office"])
        #expect(applied.previous?.identifier == "home")
    }

    @Test func renamingToAnIdentifierInUseIsRefused() {
        let error = refusal(.edit(device: "alice/phone", identifier: "home", fields: Self.patch(["identifier": "office"])))
        #expect(error?.code == .duplicateIdentifier)
        #expect(error?.message == #"cannot rename "home" to "office": device "alice/phone" already has a fence "office"; identifiers must be unique per device"#)
    }

    @Test func renamingToAnUnusableIdentifierIsAnInvalidValue() {
        let error = refusal(.edit(device: "alice/phone", identifier: "home", fields: Self.patch(["identifier": "a/b"])))
        #expect(error?.code == .invalidValue)
        #expect(error?.problems.map(\.description) == [
            #"device "alice/phone", fence "a/b": the fence identifier "a/b" must not contain '/', '+' or '#'"#,
        ])
    }

    @Test func editedValuesAreValidatedLikeNewOnes() {
        let error = refusal(.edit(device: "alice/phone", identifier: "office", fields: Self.patch(["latitude": -91, "colour": "red"])))
        #expect(error?.code == .unknownKey)
        #expect(error?.problems.count == 2)
        #expect(error?.message.contains(#"unknown key "colour""#) == true)
        #expect(error?.message.contains("latitude -91 is outside -90...90") == true)
    }

    @Test func aFenceOfThousandsOfUnknownKeysIsAnsweredInAFewLines() throws {
        // A hostile command: one fence, 60 kB of keys. Each named with the keys a fence has,
        // they made a reply and a log line of 820 kB.
        let error = try #require(refusal(.add(device: "van/7", fence: Self.yard(unknownKeys: 5_000))))
        #expect(error.code == .unknownKey)
        #expect(error.problems.count == 4)
        #expect(error.message.contains(#"unknown key "k0""#))
        #expect(error.message.contains(#"unknown key "k2""#))
        #expect(!error.message.contains(#"unknown key "k3""#))
        #expect(error.message.hasSuffix("and 4997 more unknown keys"))
    }

    /// As many unknown keys as are named: each is named, and there are none left to count.
    @Test func aFenceOfExactlyThreeUnknownKeysNamesEachAndCountsNoMore() throws {
        let error = try #require(refusal(.add(device: "van/7", fence: Self.yard(unknownKeys: 3))))
        #expect(error.problems.count == 3, "\(error.message)")
        #expect(error.message.contains(#"unknown key "k2""#))
        #expect(!error.message.contains("more unknown keys"))
    }

    /// A sound fence "yard" with `unknownKeys` more members, `k0`, `k1`, ... of value 0.
    static func yard(unknownKeys: Int) throws -> JSON {
        let keys = (0..<unknownKeys).map { "\"k\($0)\": 0" }.joined(separator: ", ")
        return try JSONParser().parse(
            #"{"identifier": "yard", "latitude": 48.13, "longitude": 11.57, "radius": 50, "eventType": "onEntry", \#(keys)}"#)
    }

    @Test func aMessageNamesTenProblemsAndCountsTheRest() {
        let problems = (0..<25).map { FenceProblem(fence: "f\($0)", reason: "missing \"identifier\"") }
        let error = FenceChangeError.invalid(.missingField, "", problems)
        #expect(error.problems == problems)
        #expect(error.message.hasPrefix(problems[0].description + "; " + problems[1].description))
        #expect(error.message.contains(problems[9].description))
        #expect(!error.message.contains(problems[10].description))
        #expect(error.message.hasSuffix("; and 15 more"))
        #expect(FenceChangeError.invalid(.missingField, "", Array(problems.prefix(10))).message
            == problems.prefix(10).map(\.description).joined(separator: "; "))
    }

    @Test func aNullFieldRemovesTheKeyAsAMergePatchDoes() throws {
        let applied = try apply(.edit(device: "alice/phone", identifier: "home", fields: Self.patch(["note": nil])))
        #expect(applied.fence?.note == "")
    }

    @Test func anEditCanTurnAPolygonIntoACircle() throws {
        let polygon = try apply(.add(device: "van/7", fence: [
            "identifier": "yard", "polygon": [[11.57, 48.13], [11.58, 48.13], [11.58, 48.14], [11.57, 48.14]], "eventType": "onEntry",
        ]))
        let circle = try apply(.edit(device: "van/7", identifier: "yard", fields: Self.patch([
            "polygon": nil, "latitude": 48.135, "longitude": 11.575, "radius": 400,
        ])), to: polygon.book)
        #expect(circle.fence?.region == .circle(center: Coordinate(latitude: 48.135, longitude: 11.575), radius: 400))
    }

    @Test func editAndDeleteOfAnUnknownDeviceAreRefused() {
        for change in [FenceChange.edit(device: "bob", identifier: "home", fields: Self.patch(["note": "x"])), .delete(device: "bob", identifier: "home")] {
            let error = refusal(change)
            #expect(error?.code == .unknownDevice)
            #expect(error?.message == #"unknown device "bob": it is not in the fence file"#)
        }
    }

    @Test func editAndDeleteOfAnUnknownFenceAreRefusedNamingTheDevicesFences() {
        for change in [FenceChange.edit(device: "alice/phone", identifier: "gym", fields: Self.patch(["note": "x"])), .delete(device: "alice/phone", identifier: "gym")] {
            let error = refusal(change)
            #expect(error?.code == .unknownFence)
            #expect(error?.message == #"device "alice/phone" has no fence "gym" (its fences: "home", "office")"#)
        }
    }

    // MARK: delete

    @Test func deleteRemovesTheFenceAndKeepsTheDevice() throws {
        let first = try apply(.delete(device: "alice/phone", identifier: "home"))
        #expect(first.previous?.identifier == "home")
        #expect(first.fence == nil)
        let second = try apply(.delete(device: "alice/phone", identifier: "office"), to: first.book)
        #expect(second.book.devices["alice/phone"] == [])
        let error = refusal(.delete(device: "alice/phone", identifier: "home"), to: second.book)
        #expect(error?.message == #"device "alice/phone" has no fence "home" (it has no fences)"#)
    }

    // MARK: append and replaceAll

    @Test func appendAddsEveryFenceAtTheEnd() throws {
        let applied = try apply(.append(device: "alice/phone", fences: [Self.fence("gym"), Self.fence("park", radius: 0)]))
        #expect(applied.book.fences(of: "alice/phone").map(\.identifier) == ["home", "office", "gym", "park"])
        #expect(applied.warnings.map(\.description) == [
            #"device "alice/phone", fence "park": radius 0 m clamped to 1 m (allowed 1...100000 m)"#,
        ])
    }

    @Test func appendRefusesIdentifiersTheDeviceHas() {
        let error = refusal(.append(device: "alice/phone", fences: [Self.fence("home"), Self.fence("gym"), Self.fence("office")]))
        #expect(error?.code == .duplicateIdentifier)
        #expect(error?.message == #"device "alice/phone" already has fences "home", "office"; identifiers must be unique per device"#)
    }

    @Test func aListUsingAnIdentifierTwiceIsRefused() {
        for change in [FenceChange.append(device: "d", fences: [Self.fence("a"), Self.fence("a")]), .replaceAll(device: "d", fences: [Self.fence("a"), Self.fence("a")])] {
            let error = refusal(change)
            #expect(error?.code == .duplicateIdentifier)
            #expect(error?.message == #"the fences for device "d" use "a" more than once; identifiers must be unique per device"#)
        }
        let thrice = refusal(.append(device: "d", fences: ["a", "b", "a", "b", "a", "c"].map { Self.fence($0) }))
        #expect(thrice?.message == #"the fences for device "d" use "a", "b" more than once; identifiers must be unique per device"#)
    }

    @Test func aListIsAllOrNoneAndNamesBadFencesByPosition() {
        let error = refusal(.append(device: "alice/phone", fences: [Self.fence("gym"), ["latitude": 1, "longitude": 2, "radius": -1, "eventType": "onExit"]]))
        #expect(error?.code == .missingField)
        #expect(error?.problems.map(\.description) == [
            #"device "alice/phone", fence #2: missing "identifier""#,
            #"device "alice/phone", fence #2: radius -1 must not be negative"#,
        ])
    }

    @Test func aListIsRefusedWithTheCodeOfItsFirstProblem() {
        let unnamed: JSON = ["latitude": 1, "longitude": 2, "radius": 5, "eventType": "onExit"]
        let far: JSON = ["identifier": "far", "latitude": 95, "longitude": 2, "radius": 5, "eventType": "onExit"]
        let first = refusal(.append(device: "alice/phone", fences: [unnamed, far, Self.fence("gym")]))
        #expect(first?.code == .missingField)
        #expect(first?.problems.count == 2)
        #expect(refusal(.replaceAll(device: "alice/phone", fences: [Self.fence("gym"), far, unnamed]))?.code == .outOfRange)
    }

    @Test func appendAndReplaceAllRespectTheFenceLimit() {
        let limits = FenceLimits(maximumFencesPerDevice: 3)
        #expect(refusal(.append(device: "alice/phone", fences: [Self.fence("a"), Self.fence("b")]), limits: limits)?.code == .fenceLimit)
        let fences = ["a", "b", "c", "d"].map { Self.fence($0) }
        let error = refusal(.replaceAll(device: "alice/phone", fences: fences), limits: limits)
        #expect(error?.message == #"device "alice/phone" would have 4 fences, but a device may have at most 3 (maximumFencesPerDevice)"#)
    }

    @Test func replaceAllReplacesTheWholeList() throws {
        let applied = try apply(.replaceAll(device: "alice/phone", fences: [Self.fence("home", radius: 5), Self.fence("gym")]))
        #expect(applied.book.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        #expect(try apply(.replaceAll(device: "new", fences: [Self.fence("a")])).book.fences(of: "new").count == 1)
    }

    @Test func everyChangeNamesItsDevice() {
        #expect(FenceChange.delete(device: "a", identifier: "x").device == "a")
        #expect(FenceChange.replaceAll(device: "b", fences: []).device == "b")
    }

    // MARK: the file

    func file(_ text: String? = FenceChangeTests.text) -> FenceFile {
        let path = text.map { directory.write($0, to: "fences.json") } ?? directory.file("fences.json")
        return FenceFile(path: path)
    }

    func contents(_ file: FenceFile) throws -> String? {
        FileManager.default.contents(atPath: file.path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func applyWritesTheFilePrettyWithSortedKeys() throws {
        let file = file()
        let (applied, written) = try file.apply(.add(device: "alice/phone", fence: Self.fence("gym")), expecting: nil)
        #expect(written == FenceFile.contents(of: applied.book))
        #expect(try contents(file) == String(decoding: written, as: UTF8.self))
        #expect(try contents(file)?.contains("""
                  {
                    "eventType": "onEntry",
                    "identifier": "gym",
                    "latitude": 52.5,
                    "longitude": 13.4,
                    "note": "",
                    "radius": 50
                  }
                ]
            """) == true)
        #expect(file.load().book == applied.book)
    }

    @Test func aFirstAddCreatesAMissingFileOnlyWhenAsked() throws {
        let file = file(nil)
        #expect(throws: FenceChangeError.self) { try file.preview(.add(device: "alice/phone", fence: Self.fence("gym"))) }
        _ = try file.apply(.add(device: "alice/phone", fence: Self.fence("gym")), expecting: nil, creatingMissingFile: true)
        #expect(file.load().book?.fences(of: "alice/phone").map(\.identifier) == ["gym"])
    }

    @Test func aCommitAfterSomeoneElseWroteTheFileIsStaleAndWritesNothing() throws {
        let file = file()
        let (_, previewed) = try file.preview(.delete(device: "alice/phone", identifier: "home"))
        let edited = #"{"devices": {"bob": []}}"#
        _ = directory.write(edited, to: "fences.json")
        let error = #expect(throws: FenceChangeError.self) {
            try file.apply(.delete(device: "alice/phone", identifier: "home"), expecting: previewed)
        }
        #expect(error?.code == .stale)
        #expect(error?.message == "the fence file \(file.path) changed since it was read (edited by someone else); nothing was written, read it again and retry")
        #expect(try contents(file) == edited)
    }

    @Test func aCommitOfWhatWasPreviewedWrites() throws {
        let file = file()
        let change = FenceChange.edit(device: "alice/phone", identifier: "office", fields: Self.patch(["radius": 200]))
        let (preview, previewed) = try file.preview(change)
        #expect(try contents(file) == Self.text)
        let (applied, _) = try file.apply(change, expecting: previewed)
        #expect(applied == preview)
        #expect(file.load().book == applied.book)
    }

    @Test func aFileThatDoesNotValidateIsRefusedAndLeftAlone() throws {
        let text = #"{"devices": {"a": [{"identifier": "x", "latitude": 95, "longitude": 0, "radius": 5, "eventType": "onEntry"}]}}"#
        let file = file(text)
        let error = #expect(throws: FenceChangeError.self) {
            try file.apply(.add(device: "a", fence: Self.fence("y")), expecting: nil)
        }
        #expect(error?.code == .invalidFile)
        #expect(error?.problems.map(\.reason) == ["latitude 95 is outside -90...90"])
        #expect(error?.message == "the fence file \(file.path) is not valid, so it cannot be changed: \(file.path):1: device \"a\", fence \"x\": latitude 95 is outside -90...90")
        #expect(try contents(file) == text)
    }

    @Test func aRefusedChangeLeavesTheFileAsItWas() throws {
        let file = file()
        #expect(throws: FenceChangeError.self) {
            try file.apply(.add(device: "alice/phone", fence: Self.fence("home")), expecting: nil)
        }
        #expect(try contents(file) == Self.text)
    }

    @Test func theLoadingWarningsAreReportedWithTheChange() throws {
        let file = file(#"{"devices": {"a": [{"identifier": "x", "latitude": 0, "longitude": 0, "radius": 0, "eventType": "onEntry"}]}}"#)
        let (applied, _) = try file.apply(.delete(device: "a", identifier: "x"), expecting: nil)
        #expect(applied.warnings.map(\.reason) == ["radius 0 m clamped to 1 m (allowed 1...100000 m)"])
    }

    @Test func aWriteThatFailsIsAnIOError() {
        let file = FenceFile(path: directory.file("missing/fences.json"))
        let error = #expect(throws: FenceChangeError.self) {
            try file.apply(.add(device: "a", fence: Self.fence("x")), expecting: nil)
        }
        #expect(error?.code == .io)
        #expect(error?.message.hasPrefix("lock \(directory.file("missing")): ") == true)
    }

    @Test func theCodesAreStable() {
        #expect(ErrorCode.allCases.map(\.rawValue) == [
            "empty_payload", "payload_too_large", "invalid_json", "not_an_object", "missing_field", "wrong_type",
            "out_of_range", "unknown_key", "duplicate_field", "invalid_value", "invalid_topic", "unknown_device", "unknown_action",
            "not_allowed", "too_many_devices", "unknown_token", "expired_token", "retained_command",
            "no_decryption_key", "invalid_envelope", "invalid_base64", "undecryptable", "decrypted_not_json",
            "unknown_fence", "duplicate_identifier",
            "fence_limit", "rate_limited", "invalid_device", "reserved_device", "unknown_group", "invalid_file", "invalid_import", "read_only", "other_shard", "stale", "io", "state_write", "fence_file",
            "connection_refused", "session_taken_over", "subscription_refused", "publish", "publish_refused", "publish_queue_full", "message_too_large", "delivery_failed",
            "delivery_queue_full",
        ])
        #expect(FenceChangeError.unknownDevice("x").description == #"unknown_device: unknown device "x": it is not in the fence file"#)
    }
}
