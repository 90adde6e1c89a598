import CBufferedSocket
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore
#if canImport(Glibc)
import Glibc
#endif

/// The parsers of untrusted input the fuzzer drives, one per target. Each must return
/// a result or a specific error for any bytes at all, never crash; on top of that each
/// checks a property of what it returns (`check` stops the fuzzer with the input that
/// broke it, which then becomes a regression test).
enum FuzzTarget: String, CaseIterable {
    /// An OwnTracks location message (`owntracks/<user>/<device>`), `LocationDecoder`.
    case ownTracks = "owntracks"
    /// A plain JSON location message (`geotify/location/<device>`), `LocationDecoder`.
    case plain
    /// A fence file, `FenceFile.parse`, and each fence it holds through `FenceCodec`.
    case fenceFile = "fence-file"
    /// A command (`geotify/cmd/<device>`), `Command.decode`, and an added fence through
    /// `FenceCodec`.
    case command
    /// A stream of MQTT packets from the broker, read as the network loop reads it:
    /// libmosquitto's reads through the buffered socket (`CBufferedSocket`) and the QoS 0
    /// PUBLISH packets taken whole out of its buffer.
    case mqttStream = "mqtt-stream"

    /// The target named by GEOTIFY_FUZZ_TARGET, read once.
    static let selected: FuzzTarget? = getenv("GEOTIFY_FUZZ_TARGET").flatMap { FuzzTarget(rawValue: String(cString: $0)) }

    /// Feeds `bytes` to the target's parser and checks what comes out.
    func run(_ bytes: [UInt8]) {
        switch self {
        case .ownTracks: location(bytes, format: .ownTracks)
        case .plain: location(bytes, format: .plain)
        case .fenceFile: fenceFile(bytes)
        case .command: command(bytes)
        case .mqttStream: mqttStream(bytes)
        }
    }

    /// A fix, if any, lies on the globe with a non-negative accuracy and time; a refusal
    /// says why. The decoder decides exactly as it does with its flat-object scan off
    /// (`FlatObjectScan`, which reads most payloads before the parser would): the same
    /// fix, or the same refusal.
    private func location(_ bytes: [UInt8], format: LocationDecoder.Format) {
        var parserAlone = LocationDecoder()
        parserAlone.scansFlatObjects = false
        let decide = { (decoder: LocationDecoder) in
            Result { () throws(InputError) -> Fix? in
                try decoder.decode(bytes, device: "fuzz/device", format: format, arrival: 1_700_000_000)
            }
        }
        let scanned = decide(LocationDecoder())
        let parsed = decide(parserAlone)
        switch (scanned, parsed) {
        case (.success(let fix), .success(let expected)): check(fix == expected, "scan \(String(describing: fix)), parser \(String(describing: expected))")
        case (.failure(let error), .failure(let expected)): check(error == expected, "scan \(error), parser \(expected)")
        default: check(false, "scan \(scanned), parser \(parsed)")
        }
        do {
            guard let fix = try scanned.get() else { return }
            check((-90...90).contains(fix.coordinate.latitude), "latitude \(fix.coordinate.latitude)")
            check((-180...180).contains(fix.coordinate.longitude), "longitude \(fix.coordinate.longitude)")
            check(fix.accuracy.map { $0 >= 0 && $0.isFinite } ?? true, "accuracy \(String(describing: fix.accuracy))")
            check(fix.timestamp >= 0 && fix.timestamp.isFinite, "timestamp \(fix.timestamp)")
        } catch {
            check(!error.message.isEmpty, "an error without a message")
        }
    }

    /// A file yields fences exactly when it has no errors, and every fence it yields
    /// reads back from its own JSON form as the same fence (what rewriting the file and
    /// `fences export` rely on).
    private func fenceFile(_ bytes: [UInt8]) {
        let limits = FenceLimits()
        let loaded = FenceFile(path: "fuzz.json", limits: limits).parse(bytes)
        check((loaded.book == nil) == !loaded.errors.isEmpty, "a book together with errors, or neither")
        for fences in loaded.book?.devices.values.map({ $0 }) ?? [] {
            for fence in fences {
                let again = FenceCodec.decode(FenceCodec.encode(fence), limits: limits)
                check(again.fence == fence, "fence \(fence.identifier) does not read back: \(again.errors)")
            }
        }
    }

    /// A command decodes or is refused with a message; a fence it adds is validated as
    /// the fence file's are.
    private func command(_ bytes: [UInt8]) {
        let decoded = Command.decode(bytes, maximumBytes: 65_536)
        switch decoded.result {
        case .success(let command):
            if case .add(let fence) = command.action {
                let result = FenceCodec.decode(fence, limits: FenceLimits())
                check((result.fence == nil) == !result.issues.isEmpty, "a fence together with issues, or neither")
            }
        case .failure(let error):
            check(!error.message.isEmpty, "an error without a message")
        }
    }

    /// The bytes after the first go to a socket the buffer reads, in pieces whose sizes
    /// the first byte chooses; in between, the stream is read packet by packet as
    /// libmosquitto reads it (the command byte, each length byte, then the rest), except
    /// that whatever the buffer offers as a whole QoS 0 PUBLISH is taken instead. Every
    /// packet offered must be the packet a plain parse of the stream finds at that point,
    /// a QoS 0 PUBLISH with the same topic, payload and RETAIN flag; never part of
    /// another.
    private func mqttStream(_ bytes: [UInt8]) {
        guard let pattern = bytes.first else { return }
        let stream = Array(bytes.dropFirst())
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { return }
        defer { geotify_buffered_socket_detach(); _ = close(ends[0]); _ = close(ends[1]) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        check(geotify_buffered_socket_attach(ends[0]) == 0, "attach")
        let properties = Int32(pattern & 1)
        var sent = 0
        var at = 0 // where the plain parse stands in `stream`
        var piece = Int(pattern >> 1) + 1
        func send() {
            let count = min(piece, stream.count - sent)
            guard count > 0 else { return }
            let written = stream[sent..<(sent + count)].withUnsafeBytes { write(ends[1], $0.baseAddress, count) }
            check(written == count, "the socket pair took \(written) of \(count) bytes")
            sent += count
            piece = piece * 5 % 97 + 1
        }
        /// The packet at `start` by a plain parse: its length, or nil when not whole in the stream.
        func packet(at start: Int) -> (length: Int, header: Int, remaining: Int)? {
            var remaining = 0
            var index = start + 1
            for shift in 0..<4 {
                guard index < stream.count else { return nil }
                let byte = stream[index]
                remaining |= Int(byte & 127) << (7 * shift)
                index += 1
                if byte & 128 == 0 {
                    return index + remaining <= stream.count ? (index + remaining - start, index - start, remaining) : nil
                }
            }
            return nil
        }
        send()
        while at < stream.count {
            guard let whole = packet(at: at) else { return }
            var view = geotify_publish_view()
            if geotify_buffered_socket_peek_publish(properties, &view) != 0 {
                let body = Array(stream[(at + whole.header)..<(at + whole.length)])
                let topicLength = Int(body[0]) << 8 | Int(body[1])
                let payloadStart = 2 + topicLength + Int(properties)
                check(stream[at] & 0xFE == 0x30 && view.packet_length == whole.length, "an offer that is not the next packet")
                check(Array(UnsafeBufferPointer(start: view.topic, count: view.topic_length)) == Array(body[2..<(2 + topicLength)]),
                      "the topic differs")
                check(Array(UnsafeBufferPointer(start: view.payload, count: view.payload_length)) == Array(body[payloadStart...]),
                      "the payload differs")
                check((view.retain != 0) == (stream[at] & 1 == 1), "the RETAIN flag differs")
                geotify_buffered_socket_take_publish(&view)
                at += whole.length
                continue
            }
            // libmosquitto's turn: the command byte, each length byte, then the rest of the
            // body in one read that may come short; after each read, inside the packet,
            // nothing may be offered.
            var read = 0
            var buffer = [UInt8](repeating: 0, count: whole.length)
            while read < whole.length {
                let want = read < whole.header ? 1 : whole.length - read
                let count = buffer.withUnsafeMutableBytes { Glibc.read(ends[0], $0.baseAddress! + read, want) }
                if count > 0 {
                    read += count
                    if read < whole.length {
                        check(geotify_buffered_socket_peek_publish(properties, &view) == 0,
                              "an offer inside a packet, \(read) of its \(whole.length) bytes read")
                    }
                } else if sent < stream.count {
                    send()
                } else {
                    return check(false, "the stream ended inside a whole packet")
                }
            }
            check(buffer == Array(stream[at..<(at + whole.length)]), "libmosquitto's reads differ from the stream")
            at += whole.length
        }
    }

    /// Stops the fuzzer, naming the broken property, unless `condition` holds.
    private func check(_ condition: Bool, _ property: @autoclosure () -> String) {
        if !condition {
            fatalError("\(rawValue): \(property())")
        }
    }
}
