public import APNs
/// What happened to a call: `incoming` makes the phone ring; every other type stops it.
///
/// `missed` and `answered_elsewhere` are accepted as "stop ringing" types and mapped exactly like `hangup`
/// (alert `"pushType": 2`, same collapse id), each with its own default alert text. Any other string is
/// rejected by the decoder with `unknown_type`.
public struct CallEventType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init?(rawValue: String) {
        switch rawValue {
        case "incoming", "hangup", "missed", "answered_elsewhere": self.rawValue = rawValue
        default: return nil
        }
    }

    private init(unchecked rawValue: String) { self.rawValue = rawValue }

    /// The phone should start ringing.
    public static let incoming = Self(unchecked: "incoming")
    /// The caller hung up: stop ringing.
    public static let hangup = Self(unchecked: "hangup")
    /// The call timed out unanswered: stop ringing.
    static let missed = Self(unchecked: "missed")
    /// Another device of the callee answered: stop ringing.
    static let answeredElsewhere = Self(unchecked: "answered_elsewhere")

    public static let all: [Self] = [.incoming, .hangup, .missed, .answeredElsewhere]

    /// True for every type that ends the ringing (hangup, missed, answered_elsewhere).
    var stopsRinging: Bool { self != .incoming }

    public var description: String { rawValue }
}

/// The APNs environment of an event's device token (`production` or `sandbox`).
public typealias CallEnvironment = APNsEnvironment
