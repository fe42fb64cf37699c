public import APNs

/// The bounded class of a transient failure, written as `x-error-class` and used as a metric label.
public struct ErrorClass: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let apns429 = Self(rawValue: "apns_429")
    public static let apns5xx = Self(rawValue: "apns_5xx")
    public static let apns4xx = Self(rawValue: "apns_4xx")
    public static let timeout = Self(rawValue: "timeout")
    public static let connect = Self(rawValue: "connect")
    public static let notProcessed = Self(rawValue: "not_processed")
    public static let transport = Self(rawValue: "transport")

    /// Classifies a `retryLater` answer: by status when there was one, else by the transport reason.
    public init(_ result: APNsResult) {
        if let status = result.status {
            switch status {
            case 429: self = .apns429
            case 500...599: self = .apns5xx
            default: self = .apns4xx
            }
            return
        }
        let reason = (result.reason ?? "").lowercased()
        if reason.contains("timeout") || reason.contains("timedout") {
            self = .timeout
        } else if reason.contains("notprocessed") || reason.contains("not_processed") || reason.contains("refused") {
            self = .notProcessed
        } else if reason.contains("connect") || reason.contains("connection") || reason.contains("goaway") {
            self = .connect
        } else {
            self = .transport
        }
    }

    public var description: String { rawValue }
}
