import CCurl

/// One libcurl easy handle for one transfer: typed setters over `curl_easy_setopt`, the
/// lists and buffers the handle points into kept alive as long as it is, the response
/// body collected up to a limit, and the upload fed from memory.
///
/// libcurl's defaults are kept where they matter: peer and host verification stay on, and
/// no proxy is set, so libcurl takes it from `http_proxy`, `https_proxy`, `all_proxy` and
/// `no_proxy` as everywhere else. Signals are off (`CURLOPT_NOSIGNAL`), as libcurl
/// requires of a handle used on any thread. Used by one thread at a time.
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let received: ByteSink
    /// Kept for the transfer: libcurl reads it through an unretained pointer.
    private var upload: ByteSource?
    /// The first failure of a setter, reported by `perform` (a setter never throws, so
    /// options read like a list).
    private var setupFailure: CURLcode?

    /// libcurl's global state, set up once before the first handle.
    private static let ready: Bool = geotify_curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// A handle that keeps at most `maximumBody` bytes of the response body; nil when
    /// libcurl cannot be set up.
    init?(maximumBody: Int) {
        guard CurlEasy.ready, let handle = geotify_curl_easy_init() else { return nil }
        self.handle = handle
        received = ByteSink(limit: maximumBody)
        errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_WRITEFUNCTION, callback: { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            let length = size * count
            Unmanaged<ByteSink>.fromOpaque(context).takeUnretainedValue()
                .append(UnsafeRawBufferPointer(start: buffer, count: length))
            return length
        })
        set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(received).toOpaque())
    }

    deinit {
        geotify_curl_easy_cleanup(handle)
        lists.forEach { geotify_curl_slist_free_all($0) }
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) {
        note(geotify_curl_set_long(handle, option, value))
    }

    func set(_ option: CURLoption, size: Int) {
        note(geotify_curl_set_size(handle, option, curl_off_t(size)))
    }

    /// A string option; libcurl copies it.
    func set(_ option: CURLoption, _ value: String) {
        note(geotify_curl_set_string(handle, option, value))
    }

    func set(_ option: CURLoption, list: [String]) {
        var head: UnsafeMutablePointer<curl_slist>?
        for item in list {
            guard let appended = geotify_curl_slist_append(head, item) else {
                note(CURLE_OUT_OF_MEMORY)
                break
            }
            head = appended
        }
        if let head { lists.append(head) }
        note(geotify_curl_set_list(handle, option, head))
    }

    /// The body of a POST, copied by libcurl byte for byte.
    func setPostBody(_ bytes: [UInt8]) {
        set(CURLOPT_POST, 1)
        set(CURLOPT_POSTFIELDSIZE_LARGE, size: bytes.count)
        var copy = bytes + [0]
        copy.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { set(CURLOPT_COPYPOSTFIELDS, pointer: base) }
        }
    }

    /// The bytes to upload (an e-mail), read by libcurl as it sends.
    func setUpload(_ bytes: [UInt8]) {
        let source = ByteSource(bytes)
        upload = source
        set(CURLOPT_UPLOAD, 1)
        set(CURLOPT_INFILESIZE_LARGE, size: bytes.count)
        set(CURLOPT_READFUNCTION, callback: { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            return Unmanaged<ByteSource>.fromOpaque(context).takeUnretainedValue()
                .read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
        })
        set(CURLOPT_READDATA, pointer: Unmanaged.passUnretained(source).toOpaque())
    }

    /// Runs the transfer: the protocol's last response code and the body, or the failure.
    func perform() -> Result<(code: Int, body: [UInt8]), CurlFailure> {
        if let setupFailure { return .failure(failure(setupFailure)) }
        let status = geotify_curl_easy_perform(handle)
        var code = 0
        _ = geotify_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &code)
        guard status == CURLE_OK else {
            var failure = failure(status)
            failure.reply = code
            return .failure(failure)
        }
        return .success((code, received.bytes))
    }

    /// The value of the last response's header `name`, if it had one.
    func responseHeader(_ name: String) -> String? {
        var header: UnsafeMutablePointer<curl_header>?
        guard geotify_curl_easy_header(handle, name, 0, UInt32(CURLH_HEADER), -1, &header) == CURLHE_OK,
              let value = header?.pointee.value
        else { return nil }
        return String(cString: value)
    }

    private func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer) {
        note(geotify_curl_set_pointer(handle, option, pointer))
    }

    private func set(_ option: CURLoption, callback: geotify_curl_data_callback) {
        note(geotify_curl_set_callback(handle, option, callback))
    }

    private func note(_ status: CURLcode) {
        if status != CURLE_OK, setupFailure == nil { setupFailure = status }
    }

    private func failure(_ status: CURLcode) -> CurlFailure {
        let detail = String(cString: errorBuffer)
        return CurlFailure(code: status, reply: 0, message: detail.isEmpty ? String(cString: geotify_curl_easy_strerror(status)) : detail)
    }
}

/// Where a response body goes: kept up to `limit` bytes, the rest read and dropped, so a
/// hostile server cannot fill memory.
private final class ByteSink {
    private(set) var bytes: [UInt8] = []
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func append(_ chunk: UnsafeRawBufferPointer) {
        let room = limit - bytes.count
        if room > 0 { bytes.append(contentsOf: chunk.prefix(room)) }
    }
}

/// What an upload reads from: the bytes and how far libcurl has read.
private final class ByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, bytes.count - offset)
        bytes[offset..<offset + count].withUnsafeBytes { buffer.copyMemory(from: $0) }
        offset += count
        return count
    }
}
