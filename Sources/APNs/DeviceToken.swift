import Telemetry

/// An APNs device token: the device's bytes as hex, normalised to lowercase.
///
/// Apple says not to assume a size; tokens are 32 bytes today. Any even number of hex digits between
/// 16 and 200 is accepted (8–100 bytes); anything else is rejected with a reason.
public struct DeviceToken: Hashable, Sendable, CustomStringConvertible {
    /// The request path the token is sent to, `/3/device/` and the lowercase hex digits: made once, when the token is
    /// read, as the one `String` the token keeps (the path is what every push needs; ``hex`` is cut from it).
    public let path: String

    private static let pathPrefix: StaticString = "/3/device/"

    /// Lowercase hex digits.
    public var hex: String { String(path.dropFirst(Self.pathPrefix.utf8CodeUnitCount)) }

    /// Validates and lowercases `text`; throws ``APNsRequestError`` when it is not a plausible token.
    public init(_ text: String) throws(APNsRequestError) {
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
        let prefix = UnsafeBufferPointer(start: Self.pathPrefix.utf8Start, count: Self.pathPrefix.utf8CodeUnitCount)
        path = String(unsafeUninitializedCapacity: prefix.count + utf8.count) { buffer in
            let afterPrefix = buffer.initialize(fromContentsOf: prefix)
            let end = buffer[afterPrefix...].initialize(fromContentsOf: utf8)
            if digits.hasUppercase {
                for index in afterPrefix..<end where buffer[index] >= UInt8(ascii: "A") && buffer[index] <= UInt8(ascii: "F") {
                    buffer[index] |= 0x20
                }
            }
            return end
        }
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
