/// What kinds of call events a ``CallTrafficGenerator`` produces, as fractions of calls (or of events).
package struct CallTrafficMix: Sendable {
    /// Calls followed by a hang-up. Default: 0.3.
    package var hangUpFraction: Double = 0.3
    /// Delay between an incoming call and its hang-up, in seconds. Default: 0.2…4.
    var hangUpDelaySeconds: ClosedRange<Double> = 0.2...4
    /// Calls to a device token the mock APNs reports as unregistered (410). Default: 0.03.
    package var deadTokenFraction: Double = 0.03
    /// Events that are not valid JSON events (dead-lettered). Default: 0.01.
    package var malformedFraction: Double = 0.01
    /// Incoming calls produced after their ring deadline (expired, never sent). Default: 0.02.
    package var expiredFraction: Double = 0.02
    /// Calls sent as VoIP pushes instead of alerts. Default: 0.1.
    var voipFraction: Double = 0.1
    /// Calls whose token is from the sandbox environment. Default: 0.2.
    package var sandboxFraction: Double = 0.2

    package init() {}
}
