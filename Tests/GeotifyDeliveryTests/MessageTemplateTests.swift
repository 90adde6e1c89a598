import GeotifyDelivery
import Testing

@Suite("Message templates")
struct MessageTemplateTests {
    @Test func fieldsModifiersAndBracesRender() throws {
        let event = try Samples.event(Samples.notification(device: "alice/phone", fence: "home", kind: .exit, note: "Bye", badge: 4))
        let template = try MessageTemplate("{{{user|upper}}} {action} {fence|capitalized} ({badge}, {event}) at {time}: {note|lower} {acc}m {lat},{lon} {device} {id} {tst}")
        #expect(template.render(event) == "{ALICE} left Home (4, exit) at 2023-11-14T22:13:20Z: bye 12m 52.5201,13.4049 alice/phone alice/phone/home/exit/1700000000 1700000000")
    }

    @Test func theDefaultsAreTheAppsNoteAndAnAliceEnteredHomeTitle() throws {
        let event = try Samples.event(Samples.notification(device: "alice/phone", fence: "home", kind: .enter, note: "Welcome home"))
        #expect(MessageTemplate.defaultTitle.render(event) == "Alice entered home")
        #expect(MessageTemplate.defaultBody.render(event) == "Welcome home")
        #expect(try MessageTemplate(MessageTemplate.defaultTitle.source) == MessageTemplate.defaultTitle)
        #expect(try MessageTemplate(MessageTemplate.defaultBody.source) == MessageTemplate.defaultBody)
        let dwell = try Samples.event(Samples.notification(device: "van", kind: .dwell))
        #expect(MessageTemplate.defaultTitle.render(dwell) == "Van stayed at home")
    }

    @Test func withoutANoteTheBodyIsTheTitle() throws {
        let event = try Samples.event(Samples.notification(note: ""))
        let content = Target(name: "t", destination: .webhook(WebhookDestination(url: "http://x", secret: Samples.secret))).content(for: event)
        #expect(content == MessageContent(title: "Alice entered home", body: "Alice entered home"))
        #expect(content.combined == "Alice entered home")
        #expect(MessageContent(title: "T", body: "B").combined == "T\nB")
    }

    @Test func capitalizedChangesTheFirstLetterOnly() throws {
        // Not Foundation's `capitalized`, which would also lower "MAIN" and raise "office".
        let event = try Samples.event(Samples.notification(fence: "iPhone-zone", note: "welcome to the MAIN office"))
        #expect(try MessageTemplate("{note|capitalized} / {fence|capitalized}").render(event) == "Welcome to the MAIN office / IPhone-zone")
    }

    @Test func spacesInsideTheBracesAreAllowed() throws {
        let event = try Samples.event(Samples.notification(device: "alice/phone"))
        #expect(try MessageTemplate("{ user | upper } {action }").render(event) == "ALICE entered")
    }

    @Test func aTextOfExactlyTheLimitIsKeptAndALongerOneCutWithAnEllipsis() {
        let limit = PushoverDestination.titleLimit
        #expect(MessageContent.truncated(String(repeating: "a", count: limit), to: limit) == String(repeating: "a", count: limit))
        #expect(MessageContent.truncated(String(repeating: "a", count: limit + 1), to: limit) == String(repeating: "a", count: limit - 1) + "…")
    }

    @Test func anAccuracyThatIsMissingRendersEmpty() throws {
        let event = try Samples.event(Samples.notification(accuracy: nil))
        #expect(try MessageTemplate("[{acc}]").render(event) == "[]")
    }

    @Test(arguments: [
        ("{nope}", "unknown field {nope}"),
        ("{note|shout}", "unknown modifier |shout"),
        ("Hello {note", "'{' that is not closed"),
        ("Hello } there", "'}' without '{'"),
    ])
    func badTemplatesAreRefusedWithTheReason(source: String, reason: String) {
        #expect {
            try MessageTemplate(source)
        } throws: { error in
            (error as? DeliverySettingsError)?.message.contains(reason) == true
        }
    }
}
