import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore

/// The fence commands on `geotify/cmd/<device>`, decided on the device's lane so a
/// preview sees the device's state as evaluation leaves it: the app's list screen
/// (`list`, `get`), Add and Edit (`add`, `edit`), Delete... (`delete`, which asks for a
/// confirmation unless told `"confirm": true`), Peek & Pop (`preview`, `commit`,
/// `cancel`) and the badge reset (`resetBadge`).
///
/// A change is not written here: the core decides it and hands it to the shell as a
/// `FenceWrite`; `finish(_:results:into:)` answers once the shell has written it. A
/// preview (the Peek) computes what a change would do without doing it: the fence as it
/// would be stored, the device's relation to it from its last fix, and the notification
/// its next fix would cause there; a commit (the Pop) writes exactly that change,
/// provided the device's fences are still what the preview saw, else it is `stale`.
extension LaneCore {
    /// Handles one command message: replies at once, or hands a fence write to the shell.
    mutating func command(_ inbound: Inbound, book: FenceBook, into effects: inout LaneEffects) {
        let device = inbound.device
        let decoded = Command.decode(inbound.message.payload, maximumBytes: configuration.maximumPayloadBytes)
        var request = CommandRequest(
            device: device, topic: inbound.message.topic, id: decoded.id, action: decoded.actionName,
            correlationData: inbound.message.correlationData, requester: inbound.requester)
        do throws(InputError) {
            if let responseTopic = inbound.message.responseTopic {
                try checkResponseTopic(responseTopic, device: device)
                request.responseTopic = responseTopic
            }
            // The broker sets the retain flag only on what it had stored and sends because
            // the bridge subscribed: such a command would run again at every connection
            // (a deleted fence added back, a fence added again deleted again).
            if inbound.message.retain {
                throw InputError(
                    .retainedCommand,
                    "the command was published retained, so the broker sends it again at every connection of the bridge and it would run each time; nothing was done: publish commands without retain, and clear this one with an empty retained message on \(inbound.message.topic)")
            }
            let command: Command
            switch decoded.result {
            case .success(let success):
                command = success
            case .failure(let error):
                effects.direct.append(configuration.messages.error(error, topic: inbound.message.topic, device: device))
                throw error
            }
            guard configuration.commandsEnabled else {
                throw InputError(.notAllowed, "commands are turned off (the commands setting)")
            }
            guard allows(device, book: book) || command.action == .resetBadge && book.knows(device) else {
                throw InputError(.notAllowed, "commands may not manage the device \"\(device)\" (not in the fence file or not in commandDevices)")
            }
            if let result = try run(command, request: request, now: inbound.arrival, book: book, into: &effects) {
                reply(ok: result, to: request, at: inbound.arrival, into: &effects)
            }
        } catch {
            refuse(error.code, error.message, to: request, at: inbound.arrival, into: &effects)
        }
    }

    /// Runs `command`; returns the reply's result members, or nil when a fence write
    /// answers later.
    private mutating func run(
        _ command: Command, request: CommandRequest, now: Double, book: FenceBook, into effects: inout LaneEffects
    ) throws(InputError) -> JSONObject? {
        let device = request.device
        var result = JSONObject()
        // Before anything is taken: a commit refused for the budget keeps its preview.
        if command.action.writesFences { try checkWriteBudget(of: device, now: now) }
        switch command.action {
        case .resetBadge:
            var record: DeviceRecord
            if let existing = devices[device] {
                record = existing
            } else {
                // Under `strictDevices` no device the file does not name has state, as
                // for its positions (`commandDevices` may let such a device command).
                if configuration.strictDevices && !book.knows(device) {
                    throw InputError(.unknownDevice, "the device \"\(device)\" has no fences (strictDevices is on)")
                }
                if let refusal = admit(device, book: book, now: now, into: &effects) { throw refusal.error }
                record = DeviceRecord(state: DeviceState(), lastSeen: now, admitted: !book.knows(device))
            }
            record.state.badge = 0
            let index = devices.insert(record, for: device)
            let state = record.state
            effects.saves[device] = state
            effects.log(.info, at: configuration.logLevel, "\(device) badge reset by a command")
            if configuration.observing { effects.observed.append(device) }
            keep(.badge, in: &effects.outbox) { configuration.messages.badge(0, of: device) }
            let relevant = Self.relevantFences(state, book.deviceFences(of: device))
            keep(.state, in: &effects.outbox) { configuration.presence.state(of: device, state, fences: relevant) }
            showTracker(of: device, at: index, state, fences: relevant, in: &effects.outbox)
            result["badge"] = 0
        case .list:
            result["fences"] = .array(book.fences(of: device).map(FenceCodec.encode))
        case .get(let identifier):
            guard let fence = book.fences(of: device).first(where: { $0.identifier == identifier }) else {
                throw InputError(FenceChangeError.unknownFence(identifier, device: device, existing: book.fences(of: device)))
            }
            result["fence"] = FenceCodec.encode(fence)
            result["relation"] = relation(of: devices[device]?.state, to: fence)
        case .add(let fence):
            effects.fenceWrites.append(FenceWrite(change: .add(device: device, fence: fence), basis: nil, request: request, reply: .changed(edit: false)))
            return nil
        case .edit(let identifier, let changes):
            effects.fenceWrites.append(FenceWrite(
                change: .edit(device: device, identifier: identifier, fields: changes), basis: nil, request: request, reply: .changed(edit: true)))
            return nil
        case .delete(let identifier, true):
            effects.fenceWrites.append(FenceWrite(change: .delete(device: device, identifier: identifier), basis: nil, request: request, reply: .deleted))
            return nil
        case .delete(let identifier, false):
            result = try preview(.delete(fence: identifier), device: device, now: now, book: book)
            result["confirm"] = "this deletes the fence: send {\"action\": \"commit\", \"token\": ...} to delete it, or {\"action\": \"cancel\", \"token\": ...} to keep it"
        case .preview(let proposal):
            result = try preview(proposal, device: device, now: now, book: book)
        case .commit(let token):
            let preview = try previews.take(token, device: device, now: now)
            guard Self.same(book.fences(of: device), preview.basis) else {
                throw InputError(.stale, "the fences of \"\(device)\" changed since the preview; nothing was changed: preview again")
            }
            effects.fenceWrites.append(FenceWrite(change: preview.change, basis: preview.basis, request: request, reply: .committed))
            return nil
        case .cancel(let token):
            _ = try previews.take(token, device: device, now: now)
            result["cancelled"] = true
        }
        return result
    }

    /// Refuses the command as `rate_limited` when `device`'s changes have kept the file
    /// being written for as long as `FenceWriteBudget` allows, saying when the next change
    /// may come.
    private func checkWriteBudget(of device: String, now: Double) throws(InputError) {
        guard let wait = writeBudget.wait(for: device, now: now) else { return }
        throw InputError(
            .rateLimited,
            "the fence changes of \"\(device)\" kept the fence file being written for the \(JSONWriter.text(of: writeBudget.perMinute)) s a minute they may (fenceWriteBudget), while every other device waited; nothing was changed: the next change may come in \(Int(wait.rounded(.up))) s")
    }

    /// Where the shell cuts a batch: before each command of a device that already has a
    /// command in the part so far. Fence writes are made at the end of each part, so a
    /// command sees the fences as every earlier command left them (a preview right after
    /// an add in one burst finds the added fence, a commit's basis is checked against the
    /// edit before it); commands for different devices stay together and share one write
    /// of the file. A batch of positions, or of commands all for different devices, is
    /// one part.
    package static func parts(of batch: [Inbound]) -> [Range<Int>] {
        var parts: [Range<Int>] = []
        var start = batch.startIndex
        var commanded: Set<String> = []
        for (index, inbound) in zip(batch.indices, batch) {
            guard case .command = inbound.route else { continue }
            if !commanded.insert(inbound.device).inserted {
                parts.append(start..<index)
                start = index
                commanded = [inbound.device]
            }
        }
        parts.append(start..<batch.endIndex)
        return parts
    }

    /// Answers the fence writes handed to the shell, in order, with the outcome of each
    /// (`results` has one per write); `book` is the fence book after them, whose removed
    /// fences are cleared at once (`leaveRemovedFences`).
    package mutating func finish(
        _ writes: [FenceWrite], results: [Result<FenceChange.Outcome, FenceChangeError>], book: FenceBook,
        took seconds: Double, at now: Double, into effects: inout LaneEffects
    ) {
        // The write made each of its devices' changes; each is charged with all of it, as
        // it would have taken about as long for that device alone.
        for device in Set(writes.map(\.request.device)) { writeBudget.charge(seconds, to: device, now: now) }
        for (write, outcome) in zip(writes, results) {
            switch outcome {
            case .failure(let error):
                refuse(error.code, error.message, to: write.request, at: now, into: &effects)
            case .success(let outcome):
                let device = write.request.device
                let stored = outcome.fence.flatMap { fence in book.fences(of: device).first { $0.identifier == fence.identifier } } ?? outcome.fence
                var result = JSONObject()
                switch write.reply {
                case .changed(let edit):
                    result["fence"] = stored.map(FenceCodec.encode) ?? .null
                    if edit { result["previous"] = outcome.previous.map(FenceCodec.encode) ?? .null }
                    result["warnings"] = .array(outcome.warnings.map { .string($0.description) })
                case .deleted:
                    result["deleted"] = outcome.previous.map(FenceCodec.encode) ?? .null
                case .committed:
                    result["committed"] = .string(Self.name(of: write.change))
                    result["fence"] = (stored ?? outcome.previous).map(FenceCodec.encode) ?? .null
                }
                let fence = (outcome.fence ?? outcome.previous)?.identifier ?? "?"
                effects.log(.info, at: configuration.logLevel, "\(device): \(Self.name(of: write.change)) of the fence \"\(fence)\" by a command on \(write.request.topic)")
                reply(ok: result, to: write.request, at: now, into: &effects)
            }
        }
        // What the write removed is cleared with it, not with whatever the lane handles next.
        leaveRemovedFences(book: book, into: &effects)
    }

    /// Whether commands may manage `device`: the `commandDevices` allow-list (ids, or
    /// prefixes ending in `/#`, or `#` for all), or by default the devices in the file.
    /// Compared byte by byte, as the broker compares the topics the device writes.
    func allows(_ device: String, book: FenceBook) -> Bool {
        guard let allowed = configuration.commandDevices else { return book.devices[device] != nil }
        let bytes = device.utf8
        return allowed.contains { pattern in
            let pattern = pattern.utf8
            if pattern.elementsEqual("#".utf8) { return true }
            if pattern.suffix(2).elementsEqual("/#".utf8) {
                return bytes.starts(with: pattern.dropLast()) || bytes.elementsEqual(pattern.dropLast(2))
            }
            return bytes.elementsEqual(pattern)
        }
    }

    /// Refuses an MQTT v5 response topic outside the device's own reply space: the
    /// bridge publishes replies with its own rights, so a client must not be able to
    /// make it publish where it may not (another device's topics, discovery configs, the
    /// command topics the bridge reads). Allowed: `<responseTopicPrefix><device>` and
    /// anything below it that a broker takes as a topic: no wildcard, and no control
    /// character or non-character (`ForbiddenCharacter`, NUL included), which mosquitto
    /// refuses, so a reply there would be lost after the command was carried out. Read
    /// byte by byte, as MQTT reads a topic: a character of Swift's joins a combining mark
    /// to the '+' or '/' before it, which compared whole would hide it.
    private func checkResponseTopic(_ topic: String, device: String) throws(InputError) {
        let base = configuration.responseTopicPrefix + device
        let bytes = topic.utf8
        let rest = bytes.dropFirst(base.utf8.count)
        guard bytes.starts(with: base.utf8), rest.isEmpty || rest.first == UInt8(ascii: "/"),
              !bytes.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }), ForbiddenCharacter.first(in: topic) == nil
        else {
            throw InputError(
                .notAllowed,
                "the response topic \"\(topic.prefix(200))\" is refused: response topics must be \"\(base)\" or below it, without wildcards or control characters")
        }
    }

    /// The Peek: the change's effect, and a token to commit it.
    private mutating func preview(_ proposal: Command.Proposal, device: String, now: Double, book: FenceBook) throws(InputError) -> JSONObject {
        let change = proposal.change(for: device)
        let basis = book.fences(of: device)
        let outcome: FenceChange.Outcome
        do {
            outcome = try change.apply(toFencesOf: book.devices[device], in: book, limits: configuration.limits)
        } catch {
            throw InputError(error)
        }
        // The device alone as the change would make it: a whole book made for a preview
        // copied the book's tables, every device of them, for each preview.
        let changed = book.view(of: device, replacedBy: outcome.fences)
        let token = configuration.makeToken()
        let expires = previews.add(token: token, change: change, device: device, basis: basis, now: now)
        let state = devices[device]?.state
        var preview = JSONObject()
        preview["change"] = .string(proposal.name)
        let stored = outcome.fence.flatMap { fence in changed.fences.first { $0.identifier == fence.identifier } }
        preview["fence"] = (stored ?? outcome.previous).map(FenceCodec.encode) ?? .null
        if case .edit = proposal { preview["previous"] = outcome.previous.map(FenceCodec.encode) ?? .null }
        if let fence = stored ?? outcome.previous {
            preview["relation"] = relation(of: state, to: fence)
            preview["notification"] = notification(for: fence.identifier, state: state, fences: changed.evaluated, revision: changed.revision) ?? .null
        } else {
            preview["notification"] = .null
        }
        preview["warnings"] = .array(outcome.warnings.map { .string($0.description) })
        var result = JSONObject()
        result["preview"] = .object(preview)
        result["token"] = .string(token)
        result["expires"] = .number(expires.rounded(.up))
        return result
    }

    /// The notification the device's next fix would cause for `fence` if it were where
    /// it was last seen: its last fix evaluated against the changed fences, as a fix of a
    /// later time than the one before (one of the same time establishes no new fence).
    private func notification(for fence: String, state: DeviceState?, fences: DeviceFences, revision: Int) -> JSON? {
        guard var state, let fix = state.lastFix else { return nil }
        state.lastFix?.timestamp = fix.timestamp.nextDown
        let evaluator = Evaluator(rules: configuration.evaluator.rules, acceptance: FixAcceptance(maximumAge: 0, maximumFutureSkew: .infinity))
        let evaluation = evaluator.evaluate(fix, fences: fences, revision: revision, now: fix.timestamp, state: &state)
        guard let notification = evaluation.notifications.first(where: { $0.fence == fence }) else { return nil }
        return (try? JSONParser().parse(configuration.messages.event(notification).payload)) ?? .null
    }

    /// The device's relation to `fence` from its last fix: inside, outside or unknown (no
    /// fix, or one too close to the edge to be sure), and the distance to the edge in
    /// metres (negative inside).
    private func relation(of state: DeviceState?, to fence: Fence) -> JSON {
        guard let fix = state?.lastFix else { return ["state": "unknown"] }
        let rules = configuration.evaluator.rules(for: fence)
        let accuracy = rules.accuracyAware && rules.accepts(accuracy: fix.accuracy) ? (fix.accuracy ?? 0) : 0
        let containment = fence.region.containment(of: fix.coordinate, accuracy: accuracy, hysteresis: rules.hysteresis(forSize: fence.size))
        let name: String = switch containment.relation {
        case .inside: "inside"
        case .outside: "outside"
        case .uncertain: "unknown"
        }
        let distance = (fence.region.signedDistance(to: fix.coordinate) * 10).rounded() / 10
        return ["state": .string(name), "distanceToEdge": .number(distance), "fixTime": .number(fix.timestamp)]
    }

    /// Replies `{"ok": true, ...result}` on `geotify/reply/<device>`, and on the response
    /// topic when the request had an allowed one, and counts the command executed; a
    /// reply larger than the broker takes is made to fit or refused (`ReplyFit`). One
    /// answered in the process (the web console) is not published, so it fits as it is.
    private mutating func reply(ok result: JSONObject, to request: CommandRequest, at now: Double, into effects: inout LaneEffects) {
        var reply = request.replyHead
        reply["ok"] = true
        for member in result.members { reply[member.key] = member.value }
        if request.requester == nil {
            switch ReplyFit(maximumPacketBytes: configuration.maximumPacketBytes, messages: configuration.messages).fit(reply, to: request) {
            case .fits:
                break
            case .trimmed(let trimmed):
                reply = trimmed
            case .refused(let error):
                refuse(error.code, error.message, to: request, at: now, into: &effects)
                return
            }
        }
        effects.counters.add(.commandsExecuted)
        send(reply, to: request, into: &effects)
    }

    /// Replies `{"ok": false, "error": {"code", "message"}}`, counts the refusal and logs it
    /// as `logRefusal` allows at `now`.
    private mutating func refuse(_ code: ErrorCode, _ message: String, to request: CommandRequest, at now: Double, into effects: inout LaneEffects) {
        var reply = request.replyHead
        reply["ok"] = false
        reply["error"] = ["code": .string(code.rawValue), "message": .string(message)]
        effects.counters.add(.commandsRefused(code))
        logRefusal(code, at: now, into: &effects, "refused the command on \(request.topic): \(code.rawValue): \(message)")
        send(reply, to: request, into: &effects)
    }

    private func send(_ reply: JSONObject, to request: CommandRequest, into effects: inout LaneEffects) {
        if let requester = request.requester {
            effects.answers.append(LaneAnswer(requester: requester, outcome: .reply(reply)))
            return
        }
        let message = configuration.messages.reply(reply, to: request.device)
        effects.direct.append(message)
        if let responseTopic = request.responseTopic {
            var response = message
            response.topic = responseTopic
            response.correlationData = request.correlationData
            effects.direct.append(response)
        }
    }

    /// Whether two lists of a device's fences are the same but for revisions.
    static func same(_ lhs: [Fence], _ rhs: [Fence]) -> Bool {
        lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0.hasSameDefinition(as: $1) }
    }

    static func name(of change: FenceChange) -> String {
        switch change {
        case .add: "add"
        case .edit: "edit"
        case .delete: "delete"
        case .append, .replaceAll: "import"
        }
    }
}

extension InputError {
    /// The refusal of a fence change, with its code and message.
    init(_ error: FenceChangeError) {
        self.init(error.code, error.message)
    }
}
