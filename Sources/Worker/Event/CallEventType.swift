package import APNs
/// What happened to a call: `incoming` makes the phone ring; every other type stops it.
///
/// `missed` and `answered_elsewhere` are accepted as "stop ringing" types and mapped exactly like `hangup`
/// (alert `"pushType": 2`, same collapse id), each with its own default alert text. Any other string is
/// rejected by the decoder with `unknown_type`.
///
/// An enum, not a struct around its string: the type is compared several times per event (mapper, dispatcher,
/// call tracker, router), and an enum compares in one instruction where small strings take a call each time.
package enum CallEventType: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The phone should start ringing.
    case incoming
    /// The caller hung up: stop ringing.
    case hangup
    /// The call timed out unanswered: stop ringing.
    case missed
    /// Another device of the callee answered: stop ringing.
    case answeredElsewhere = "answered_elsewhere"

    /// True for every type that ends the ringing (hangup, missed, answered_elsewhere).
    var stopsRinging: Bool { self != .incoming }

    package var description: String { rawValue }
}

/// The APNs environment of an event's device token (`production` or `sandbox`).
package typealias CallEnvironment = APNsEnvironment
