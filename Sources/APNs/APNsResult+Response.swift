internal import Foundation
internal import HTTP2
import Telemetry

extension APNsResult {
    /// ``init(status:headers:body:)`` for a response as it arrived: the same result, read from the raw header bytes.
    init(response: HTTP2Response) {
        var id: APNsID?
        var uniqueID: String?
        response.forEachHeaderField { name, value in
            guard name.count == 7 || name.count == 14 else { return }
            if Self.equalsIgnoringASCIICase(name, "apns-id") {
                id = APNsID(utf8: value)
            } else if Self.equalsIgnoringASCIICase(name, "apns-unique-id") {
                uniqueID = Self.lowercasedString(value)
            }
        }
        self.init(status: response.status, id: id, uniqueID: uniqueID, body: response.body)
    }

    /// Builds the result for one APNs response.
    ///
    /// Reads `{"reason":…,"timestamp":…}` from `body` (anything unparseable is treated as no body), the `apns-id`
    /// header (a UUID, its text lowercase) and `apns-unique-id` (lowercased). The disposition comes from the reason
    /// when it is a known one (``APNsReason/disposition``), else from the status
    /// (``APNsReason/disposition(forStatus:)``). A 200 is always delivered.
    /// - Parameters:
    ///   - status: `:status`.
    ///   - headers: response headers; names compared case-insensitively.
    ///   - body: the DATA bytes (empty on success).
    init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        var id: APNsID?
        var uniqueID: String?
        for header in headers {
            switch header.name.lowercased() {
            case "apns-id": id = APNsID(header.value)
            case "apns-unique-id": uniqueID = header.value.lowercased()
            default: break
            }
        }
        self.init(status: status, id: id, uniqueID: uniqueID, body: body)
    }

    private init(status: Int, id: APNsID?, uniqueID: String?, body: [UInt8]) {
        let parsed = Self.parseErrorBody(body)
        let reason = parsed.reason.map(APNsReason.init(rawValue:))
        let disposition: APNsDisposition =
            if status == 200 { .delivered } else { reason?.disposition ?? APNsReason.disposition(forStatus: status) }
        self.init(
            disposition: disposition,
            status: status,
            reason: parsed.reason,
            id: id,
            apnsUniqueID: uniqueID,
            timestampMilliseconds: parsed.timestamp
        )
    }

    /// `String(decoding: bytes, as: UTF8.self).lowercased()`, built eight bytes at a time when the bytes are ASCII
    /// (an `apns-unique-id` per answer, on the event loop).
    private static func lowercasedString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return "" }
        var ascii = true
        let lowered = String(unsafeUninitializedCapacity: bytes.count) { buffer in
            let source = UnsafeRawPointer(base)
            let target = UnsafeMutableRawPointer(buffer.baseAddress!)
            var offset = 0
            while offset < bytes.count {
                // The last word overlaps the one before it when the count is not a multiple of eight: lowering a
                // byte twice is harmless. Shorter than a word: one padded word.
                let start = bytes.count >= 8 ? min(offset, bytes.count - 8) : 0
                var word: UInt64 = 0
                withUnsafeMutableBytes(of: &word) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(start: source + start, count: min(8, bytes.count)))
                }
                if word & ByteLanes.highBits != 0 { ascii = false }
                // The high bit of each `A`–`Z` lane (lanes with the high bit set never count), moved to 0x20: +32.
                let uppercase = ByteLanes.inRange(word & ~ByteLanes.highBits, UInt8(ascii: "A"), UInt8(ascii: "Z"))
                word |= (uppercase & ~word) >> 2
                withUnsafeBytes(of: word) {
                    (target + start).copyMemory(from: $0.baseAddress!, byteCount: min(8, bytes.count))
                }
                offset = start + 8
            }
            return bytes.count
        }
        return ascii ? lowered : String(decoding: bytes, as: UTF8.self).lowercased()
    }

    /// Whether `bytes` spell `text` (whose letters are lowercase ASCII) with ASCII letters in any case. Header names
    /// arrive in lowercase (nghttp2 resets a stream whose answer has an uppercase name), so the bytes are compared as
    /// they are first.
    private static func equalsIgnoringASCIICase(_ bytes: UnsafeBufferPointer<UInt8>, _ text: String) -> Bool {
        guard bytes.count == text.utf8.count else { return false }
        let compare = { (expected: UnsafeBufferPointer<UInt8>) -> Bool in
            guard let base = bytes.baseAddress, let wanted = expected.baseAddress else { return true }
            if memcmp(base, wanted, expected.count) == 0 { return true }
            for index in 0..<expected.count {
                var byte = bytes[index]
                if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 32 }
                guard byte == expected[index] else { return false }
            }
            return true
        }
        return text.withUTF8InPlace(compare)
    }

    /// A push that got no response: ``APNsReason/timeout``, ``APNsReason/connectionLost`` or
    /// ``APNsReason/notProcessed``. Always ``APNsDisposition/retryLater``, with no status.
    static func transportFailure(reason: APNsReason, id: APNsID? = nil) -> APNsResult {
        APNsResult(disposition: .retryLater, status: nil, reason: reason.rawValue, id: id)
    }

    /// ``reason`` as an ``APNsReason``.
    public var apnsReason: APNsReason? { reason.map(APNsReason.init(rawValue:)) }

    /// See ``APNsReason/needsTokenRefresh``.
    var needsTokenRefresh: Bool { apnsReason?.needsTokenRefresh ?? false }

    /// See ``APNsReason/needsNewConnection``; also true for a 500 without a reason.
    var needsNewConnection: Bool {
        if let reason = apnsReason { return reason.needsNewConnection }
        return status == 500
    }

    /// The `reason` and `timestamp` of an APNs error body; nil fields when missing or not JSON.
    static func parseErrorBody(_ body: [UInt8]) -> (reason: String?, timestamp: Int64?) {
        guard !body.isEmpty, body.count <= 64 * 1024,
            let object = try? JSONSerialization.jsonObject(with: Data(body), options: []),
            let dictionary = object as? [String: Any]
        else { return (nil, nil) }
        let reason = (dictionary["reason"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        var timestamp: Int64?
        switch dictionary["timestamp"] {
        case let number as NSNumber where !(number is Bool):
            let value = number.doubleValue
            if value.isFinite, abs(value) < 9e15 { timestamp = Int64(value) }
        case let text as String:
            timestamp = Int64(text)
        default:
            break
        }
        return (reason, timestamp)
    }
}
