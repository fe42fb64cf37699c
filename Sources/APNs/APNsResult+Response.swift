internal import Foundation
internal import HTTP2
import Telemetry

extension APNsResult {
    /// ``init(status:headers:body:)`` for a response as it arrived: the same result, read from the raw header bytes.
    init(response: HTTP2Response) {
        var id: APNsID?
        var uniqueID: APNsID?
        response.forEachHeaderField { name, value in
            guard name.count == 7 || name.count == 14 else { return }
            if Self.equalsIgnoringASCIICase(name, "apns-id") {
                id = APNsID(utf8: value)
            } else if Self.equalsIgnoringASCIICase(name, "apns-unique-id") {
                uniqueID = APNsID(utf8: value)
            }
        }
        self.init(status: response.status, id: id, uniqueID: uniqueID, body: response.body)
    }

    /// Builds the result for one APNs response.
    ///
    /// Reads `{"reason":…,"timestamp":…}` from `body` (anything unparseable is treated as no body), the `apns-id`
    /// and `apns-unique-id` headers (UUIDs, either case; anything else is read as none). The disposition comes from
    /// the reason when it is a known one (``APNsReason/disposition``), else from the status
    /// (``APNsReason/disposition(forStatus:)``). A 200 is always delivered.
    /// - Parameters:
    ///   - status: `:status`.
    ///   - headers: response headers; names compared case-insensitively.
    ///   - body: the DATA bytes (empty on success).
    init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        var id: APNsID?
        var uniqueID: APNsID?
        for header in headers {
            switch header.name.lowercased() {
            case "apns-id": id = APNsID(header.value)
            case "apns-unique-id": uniqueID = APNsID(header.value)
            default: break
            }
        }
        self.init(status: status, id: id, uniqueID: uniqueID, body: body)
    }

    private init(status: Int, id: APNsID?, uniqueID: APNsID?, body: [UInt8]) {
        let parsed = Self.parseErrorBody(body)
        let reason = parsed.reason.map(APNsReason.init(rawValue:))
        let disposition: APNsDisposition =
            if status == 200 { .delivered } else { reason?.disposition ?? APNsReason.disposition(forStatus: status) }
        self.init(
            disposition: disposition,
            status: status,
            reason: parsed.reason,
            id: id,
            uniqueID: uniqueID,
            timestampMilliseconds: parsed.timestamp
        )
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
    package var apnsReason: APNsReason? { reason.map(APNsReason.init(rawValue:)) }

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
