/// An APNs device token: the device's bytes as hex, normalised to lowercase.
///
/// Apple says not to assume a size; tokens are 32 bytes today. Any even number of hex digits between
/// 16 and 200 is accepted (8–100 bytes); anything else is rejected with a reason.
public struct DeviceToken: Hashable, Sendable, CustomStringConvertible {
    /// Lowercase hex digits.
    public let hex: String

    /// Validates and lowercases `text`; throws ``APNsRequestError`` when it is not a plausible token.
    public init(_ text: String) throws(APNsRequestError) {
        let utf8 = text.utf8
        guard !utf8.isEmpty else { throw APNsRequestError(.badDeviceToken, "device token is empty") }
        guard utf8.count % 2 == 0, (Self.minimumHexDigits...Self.maximumHexDigits).contains(utf8.count) else {
            throw APNsRequestError(
                .badDeviceToken,
                "device token must be an even number of hex digits between \(Self.minimumHexDigits) and \(Self.maximumHexDigits), got \(utf8.count)"
            )
        }
        // One pass: hex digits only, and whether any is uppercase (tokens usually arrive in lowercase already: the
        // caller's string is kept then, no copy).
        var text = text
        let digits = text.withUTF8 { HexDigits.scan($0) }
        guard digits.allHex else {
            throw APNsRequestError(.badDeviceToken, "device token contains a character that is not a hex digit")
        }
        self.hex = digits.hasUppercase ? text.lowercased() : text
    }

    /// The token for logs: first and last 4 hex digits only.
    public var masked: String { "\(hex.prefix(4))…\(hex.suffix(4))" }

    /// Logs and error texts show the masked token; use ``hex`` for the request path.
    public var description: String { masked }

    public static let minimumHexDigits = 16
    public static let maximumHexDigits = 200

    /// An ASCII hex digit, either case.
    public static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }
}
