import APNs

/// The bounded class of a transient failure, written as `x-error-class` and used as a metric label.
struct ErrorClass: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    let rawValue: String
    init(rawValue: String) { self.rawValue = rawValue }

    static let apns429 = Self(rawValue: "apns_429")
    static let apns5xx = Self(rawValue: "apns_5xx")
    static let apns4xx = Self(rawValue: "apns_4xx")
    static let timeout = Self(rawValue: "timeout")
    static let connect = Self(rawValue: "connect")
    static let notProcessed = Self(rawValue: "not_processed")
    static let transport = Self(rawValue: "transport")
    /// The app's credential had its bound of pushes in flight (``APNsReason/appInFlightLimit``); nothing was sent.
    static let appInFlightLimit = Self(rawValue: "app_in_flight_limit")

    /// Classifies a `retryLater` answer: by status when there was one, else by its typed transport reason.
    init(_ result: APNsResult) {
        if let status = result.status {
            switch status {
            case 429: self = .apns429
            case 500...599: self = .apns5xx
            default: self = .apns4xx
            }
            return
        }
        switch result.apnsReason {
        case .appInFlightLimit: self = .appInFlightLimit
        case .timeout: self = .timeout
        case .notProcessed: self = .notProcessed
        case .connectionLost, .connectFailed: self = .connect
        default: self = .transport
        }
    }

    var description: String { rawValue }
}
