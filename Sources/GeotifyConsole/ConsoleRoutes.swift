import GeotifyCore
import GeotifyHTTP
import GeotifyJSON
import GeotifyStore

/// The console's endpoints and their handlers.
///
/// | route | who | what |
/// |---|---|---|
/// | `GET /` | read | the map page (`console.js`, `console.css`, `leaflet/...` beside it) |
/// | `GET /api/state` | read | everything the page starts from: session, map settings, devices, fences, notifications |
/// | `GET /api/devices`, `/api/fences`, `/api/notifications?limit=` | read | the parts of it |
/// | `GET /api/events` | read | the live stream (Server-Sent Events `state`, `device`, `forgotten`, `notification`, and `fences`, a notice to fetch `/api/fences`) |
/// | `POST /api/cmd/<device>` | read for `list`/`get`, else manage | a fence command, as on `geotify/cmd/<device>`; the reply as on `geotify/reply/<device>` |
/// | `GET /api/fences.geojson` | read | every fence as GeoJSON |
/// | `POST /api/fences.geojson?mode=append|replace&device=` | manage | import GeoJSON |
/// | `POST /pub` | tracker | OwnTracks HTTP mode |
/// | `GET /healthz` | anyone | 200 or 503 with the reason |
/// | `GET /metrics` | metrics | Prometheus text format |
extension Console {
    func routes() -> [Route] {
        [
            Route("GET", "/", access: .role(.read)) { _, _, _, responder in
                responder.send(Console.page(ConsolePage.html, type: "text/html; charset=utf-8"))
            },
            Route("GET", "/console.js", access: .role(.read)) { _, _, _, responder in
                responder.send(Console.page(ConsolePage.script, type: "text/javascript; charset=utf-8"))
            },
            Route("GET", "/console.css", access: .role(.read)) { _, _, _, responder in
                responder.send(Console.page(ConsolePage.style, type: "text/css; charset=utf-8"))
            },
            Route("GET", "/leaflet/{file...}", access: .role(.read)) { [leaflet] _, captures, _, responder in
                responder.send(leaflet.response(for: captures["file"] ?? ""))
            },
            Route("GET", "/api/state", access: .role(.read)) { [weak self] _, _, user, responder in
                guard let self else { return }
                responder.send(unsent.answer(for: user) { .json(stateJSON(user: user)) })
            },
            Route("GET", "/api/devices", access: .role(.read)) { [backend, unsent] _, _, user, responder in
                responder.send(unsent.answer(for: user) { .json(.array(backend.devices().sorted { $0.device < $1.device }.map(\.json))) })
            },
            Route("GET", "/api/fences", access: .role(.read)) { [weak self] _, _, user, responder in
                guard let self else { return }
                responder.send(fenceList(for: user))
            },
            Route("GET", "/api/notifications", access: .role(.read)) { [recent] request, _, _, responder in
                let limit = request.query["limit"].flatMap { Int($0) } ?? recent.capacity
                responder.send(.json(.array(recent.newest(limit))))
            },
            Route("GET", "/api/events", access: .role(.read)) { [weak self] _, _, user, responder in
                guard let self else { return }
                responder.send(events(user: user))
            },
            Route("POST", "/api/cmd/{device...}", access: .role(.read)) { [backend] request, captures, user, responder in
                Console.command(request, device: captures["device"] ?? "", user: user, backend: backend, responder: responder)
            },
            Route("GET", "/api/fences.geojson", access: .role(.read)) { [backend, unsent] _, _, user, responder in
                responder.send(unsent.answer(for: user) {
                    var response = HTTPResponse.json(FenceGeoJSON.export(backend.fenceBook()))
                    response.headers["Content-Type"] = "application/geo+json"
                    return response
                })
            },
            Route("POST", "/api/fences.geojson", access: .role(.manage)) { [backend] request, _, _, responder in
                Console.importGeoJSON(request, backend: backend, responder: responder)
            },
            Route("POST", "/pub", access: .role(.tracker)) { [backend] request, _, user, responder in
                Console.publish(request, user: user, backend: backend, responder: responder)
            },
            Route("GET", "/healthz", access: .open) { [backend] _, _, _, responder in
                let health = backend.health()
                responder.send(.json(health.json, status: health.isHealthy ? 200 : 503))
            },
            Route("GET", "/metrics", access: .role(.metrics)) { [weak self] _, _, _, responder in
                guard let self else { return }
                let text = PrometheusText.render(
                    backend.metrics(), health: backend.health(), connections: connectionCount, subscribers: stream.subscriberCount)
                responder.send(.text(text, contentType: PrometheusText.contentType))
            },
        ]
    }

    /// One of the page's embedded files.
    static func page(_ bytes: [UInt8], type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: ["Content-Type": type], body: .bytes(bytes))
    }

    // MARK: - Documents

    /// What the page starts from.
    func stateJSON(user: HTTPUser) -> JSON {
        var session = JSONObject()
        session["user"] = user.name.map(JSON.string) ?? .null
        session["roles"] = .array(Role.allCases.filter(user.has).map { .string($0.rawValue) })
        session["logins"] = .bool(authenticator != nil)
        var map = JSONObject()
        map["tiles"] = .string(settings.tiles)
        map["attribution"] = .string(settings.tileAttribution)
        var object = JSONObject()
        object["session"] = .object(session)
        object["map"] = .object(map)
        object["devices"] = .array(backend.devices().sorted { $0.device < $1.device }.map(\.json))
        object["fences"] = fencesJSON(of: backend.fenceBook())
        object["notifications"] = .array(recent.newest(recent.capacity))
        return .object(object)
    }

    /// `GET /api/fences`: the list of the book in force, rendered once for all the requests
    /// that come while it is being sent (`SharedAnswer`), which count once among each
    /// user's unsent answers; refused (429) before rendering when the user has no slot.
    func fenceList(for user: HTTPUser) -> HTTPResponse {
        let book = backend.fenceBook()
        let body: HeldBody
        if let shared = fenceListAnswer.body(of: book.edition) {
            body = shared
        } else {
            guard unsent.hasRoom(for: user) else { return unsent.refusal(for: user) }
            body = HeldBody(copying: JSONWriter().bytes(fencesJSON(of: book)))
            fenceListAnswer.keep(body, of: book.edition)
        }
        guard let lease = unsent.lease(for: user, sharing: body) else { return unsent.refusal(for: user) }
        var response = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: .held(body))
        response.lease = lease
        return response
    }

    /// `{"devices": {device: [fence]}, "shared": {owner: [fence]}, "groups": {...}, "truncated": bool}`,
    /// fences in the fence file's form; at most `maximumSharedFencesShown` shared ones.
    func fencesJSON(of book: FenceBook) -> JSON {
        var devices = JSONObject()
        for device in book.devices.keys.sorted() {
            devices[device] = .array(book.fences(of: device).map(FenceCodec.encode))
        }
        var shared = JSONObject()
        var budget = Console.maximumSharedFencesShown
        var truncated = false
        for owner in book.shared.keys.sorted() {
            let fences = book.shared[owner]?.fences ?? []
            if fences.count > budget { truncated = true }
            shared[owner] = .array(fences.prefix(max(0, budget)).map(FenceCodec.encode))
            budget -= min(budget, fences.count)
        }
        var groups = JSONObject()
        for group in book.groups.keys.sorted() {
            groups[group] = .array((book.groups[group] ?? []).map(JSON.string))
        }
        return ["devices": .object(devices), "shared": .object(shared), "groups": .object(groups), "truncated": .bool(truncated)]
    }

    /// The live stream: opens with the whole state, then follows updates.
    /// The opening is a copy of the state per stream: until it has been taken whole it
    /// counts as one of the user's unsent large answers (`UnsentAnswers`), so a client that
    /// opens streams and does not read them holds at most that many copies.
    func events(user: HTTPUser) -> HTTPResponse {
        guard let lease = unsent.lease(for: user) else { return unsent.refusal(for: user) }
        guard let subscription = stream.subscribe() else {
            var refusal = HTTPResponse.refusal(.tooManyStreams, "\(stream.maximumSubscribers) pages already follow live updates; try again later")
            refusal.headers["Retry-After"] = "30"
            return refusal
        }
        // The state may be larger than the stream's bound (a large fence book); it is
        // the opening, which the bound does not count.
        subscription.open(ServerSentEvent(name: "state", data: JSONWriter().string(stateJSON(user: user))).encoded, holding: lease)
        return HTTPResponse(
            status: 200,
            headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"],
            body: .events(subscription))
    }

    // MARK: - Changes

    /// A fence command for `device`: the MQTT command's JSON in, its reply out, with the
    /// reply's error code as the HTTP status.
    static func command(_ request: HTTPRequest, device: String, user: HTTPUser, backend: any ConsoleBackend, responder: HTTPResponder) {
        if let refusal = requireJSON(request) { return responder.send(refusal) }
        let parsed = try? JSONParser(maxDepth: 16).parse(request.body)
        let action = parsed?["action"]?.stringValue
        if !user.has(.manage) && !["list", "get"].contains(action) {
            var reply = JSONObject()
            if let id = parsed?["id"]?.stringValue { reply["id"] = .string(id) }
            if let action { reply["action"] = .string(action) }
            reply["ok"] = false
            reply["error"] = ["code": .string(ErrorCode.notAllowed.rawValue), "message": .string("user \"\(user.name ?? "")\" may only list and get fences (changing them needs the role \"manage\")")]
            var response = HTTPResponse.json(.object(reply), status: 403)
            response.refusalCode = .domain(.notAllowed)
            return responder.send(response)
        }
        backend.run(command: request.body, device: device) { reply in
            let ok = reply["ok"]?.boolValue == true
            let code = reply["error"]?["code"]?.stringValue.flatMap(ErrorCode.init(rawValue:))
            var response = HTTPResponse.json(reply, status: ok ? 200 : code.map(ReplyStatus.status(for:)) ?? 400)
            response.refusalCode = ok ? nil : code.map(RefusalCode.domain)
            responder.send(response)
        }
    }

    /// A GeoJSON import.
    static func importGeoJSON(_ request: HTTPRequest, backend: any ConsoleBackend, responder: HTTPResponder) {
        if let refusal = requireJSON(request, also: "application/geo+json") { return responder.send(refusal) }
        let mode = request.query["mode"] ?? "append"
        guard mode == "append" || mode == "replace" else {
            return responder.send(ConsoleRefusal(.invalidValue, "mode must be append or replace, not \"\(mode)\"").response)
        }
        let plan: FenceImportPlan
        do {
            plan = try FenceGeoJSON.plan(parsing: request.body, defaultDevice: request.query["device"], replace: mode == "replace")
        } catch {
            return responder.send(error.response)
        }
        backend.importFences(plan) { result in
            switch result {
            case .success(let outcome):
                responder.send(.json(["ok": true, "imported": .number(Double(outcome.fences)), "warnings": .array(outcome.warnings.map(JSON.string))]))
            case .failure(let refusal):
                responder.send(refusal.response)
            }
        }
    }

    /// OwnTracks HTTP mode: the body goes in as if published on `owntracks/<user>/<device>`;
    /// the answer is a JSON array, `[]` when there is nothing for the app. The body must be
    /// declared JSON, as the OwnTracks apps declare it (`application/json`, with or without
    /// a charset): otherwise a page on another site could post a position for a tracker
    /// whose login its browser holds.
    static func publish(_ request: HTTPRequest, user: HTTPUser, backend: any ConsoleBackend, responder: HTTPResponder) {
        if let refusal = requireJSON(request) { return responder.send(refusal) }
        let sender: OwnTracksSender
        do {
            sender = try OwnTracksSender(request: request, login: user)
        } catch {
            return responder.send(error.response)
        }
        backend.publish(owntracks: request.body, user: sender.user, device: sender.device) { result in
            switch result {
            case .success(let messages):
                responder.send(.json(.array(messages)))
            case .failure(let refusal):
                responder.send(refusal.response)
            }
        }
    }

    /// 415 unless the body is declared JSON: a page on another site cannot send that
    /// without the browser asking first (CORS), which this server never allows.
    static func requireJSON(_ request: HTTPRequest, also other: String? = nil) -> HTTPResponse? {
        let type = request.mediaType
        if type == "application/json" || (other != nil && type == other) { return nil }
        return .refusal(.unsupportedMediaType, "send the body as Content-Type: application/json\(other.map { " or \($0)" } ?? "")")
    }
}
