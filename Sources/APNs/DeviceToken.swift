import Telemetry

/// An APNs device token: the device's bytes as hex, normalised to lowercase.
///
/// Apple says not to assume a size; tokens are 32 bytes today. Any even number of hex digits between
/// 16 and 200 is accepted (8–100 bytes); anything else is rejected with a reason.
///
/// The digits of a token of up to 64 (every token APNs issues today) are kept in the value itself, so reading one from
/// an event allocates nothing and copying one retains nothing; a push writes its `:path` from them
/// (``writePath(to:)``). A longer token keeps its digits in an array.
package struct DeviceToken: Hashable, Sendable, CustomStringConvertible {
    /// The lowercase digits of a token of up to ``inlineDigits``, zero past its end.
    private var inline: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// The lowercase digits of a longer token; nil when they are in ``inline``.
    private var long: [UInt8]?
    /// The number of hex digits.
    package let digitCount: Int

    private static let inlineDigits = 64
    private static let pathPrefix: StaticString = "/3/device/"

    /// Lowercase hex digits.
    package var hex: String { withDigits { String(decoding: $0, as: UTF8.self) } }

    /// The request path the token is sent to: `/3/device/` and the lowercase hex digits.
    package var path: String {
        String(unsafeUninitializedCapacity: pathCount) { buffer in
            writePath(to: UnsafeMutableRawBufferPointer(buffer))
            return pathCount
        }
    }

    /// The length of ``path`` in bytes.
    package var pathCount: Int { Self.pathPrefix.utf8CodeUnitCount + digitCount }

    /// Writes ``path`` into the first ``pathCount`` bytes of `target`.
    package func writePath(to target: UnsafeMutableRawBufferPointer) {
        let prefixCount = Self.pathPrefix.utf8CodeUnitCount
        target.baseAddress!.copyMemory(from: Self.pathPrefix.utf8Start, byteCount: prefixCount)
        withDigits { (target.baseAddress! + prefixCount).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    /// Calls `body` with the lowercase hex digits.
    package func withDigits<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        if let long { return long.withUnsafeBytes(body) }
        return withUnsafeBytes(of: inline) { body(UnsafeRawBufferPointer(rebasing: $0.prefix(digitCount))) }
    }

    /// Validates and lowercases `text`; throws ``APNsRequestError`` when it is not a plausible token.
    package init(_ text: String) throws(APNsRequestError) {
        let token = text.withUTF8InPlace { utf8 in Result { () throws(APNsRequestError) in try DeviceToken(utf8: utf8) } }
        self = try token.get()
    }

    /// Validates and lowercases the token's UTF-8 bytes; throws ``APNsRequestError`` when it is not a plausible token.
    package init(utf8: UnsafeBufferPointer<UInt8>) throws(APNsRequestError) {
        guard !utf8.isEmpty else { throw APNsRequestError(.badDeviceToken, "device token is empty") }
        guard utf8.count % 2 == 0, (Self.minimumHexDigits...Self.maximumHexDigits).contains(utf8.count) else {
            throw APNsRequestError(
                .badDeviceToken,
                "device token must be an even number of hex digits between \(Self.minimumHexDigits) and \(Self.maximumHexDigits), got \(utf8.count)"
            )
        }
        // One pass: hex digits only, and whether any is uppercase (tokens usually arrive in lowercase already).
        let digits = HexDigits.scan(utf8)
        guard digits.allHex else {
            throw APNsRequestError(.badDeviceToken, "device token contains a character that is not a hex digit")
        }
        digitCount = utf8.count
        // Setting 0x20 lowercases a hex letter and leaves a decimal digit as it is.
        func lowercase(_ bytes: UnsafeMutableRawBufferPointer) {
            guard digits.hasUppercase else { return }
            for index in 0..<utf8.count { bytes[index] |= 0x20 }
        }
        if utf8.count <= Self.inlineDigits {
            withUnsafeMutableBytes(of: &inline) { bytes in
                bytes.baseAddress!.copyMemory(from: utf8.baseAddress!, byteCount: utf8.count)
                lowercase(bytes)
            }
        } else {
            var bytes = Array(utf8)
            bytes.withUnsafeMutableBytes(lowercase)
            long = bytes
        }
    }

    package static func == (lhs: DeviceToken, rhs: DeviceToken) -> Bool {
        lhs.digitCount == rhs.digitCount && lhs.withDigits { left in rhs.withDigits { left.elementsEqual($0) } }
    }

    package func hash(into hasher: inout Hasher) {
        withDigits { hasher.combine(bytes: $0) }
    }

    /// The token for logs: first and last 4 hex digits only.
    package var masked: String { "\(hex.prefix(4))…\(hex.suffix(4))" }

    /// Logs and error texts show the masked token; use ``hex`` for the request path.
    package var description: String { masked }

    package static let minimumHexDigits = 16
    package static let maximumHexDigits = 200

    /// An ASCII hex digit, either case.
    package static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }
}
