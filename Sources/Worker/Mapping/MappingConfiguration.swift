/// How call events become APNs requests: defaults plus per-deployment overrides.
///
/// Every property has a default, so `MappingConfiguration()` produces the mapping ``PushMapper`` documents.
package struct MappingConfiguration: Sendable, Hashable {
    /// Default alert content for one event type.
    package struct AlertDefaults: Sendable, Hashable {
        /// Use the caller's name as the title when the event has one. Default: true.
        var titleFromCallerName: Bool = true
        /// The title when there is no caller name (or ``titleFromCallerName`` is false).
        /// Default: per type (see ``MappingConfiguration/init()``).
        package var title: String
        /// Default: nil (no subtitle).
        var subtitle: String? = nil
        /// The body text. Default: per type, e.g. "Incoming call", "Call ended".
        package var body: String
        /// `title-loc-key`, looked up in the app's Localizable.strings. Default: nil.
        package var titleLocKey: String? = nil
        /// `loc-key` for the body. Default: nil.
        package var locKey: String? = nil
        /// Add `loc-args: [caller name]` (and `title-loc-args`) when a loc key is set and the caller has a name.
        /// Default: true.
        var callerNameAsLocArgs: Bool = true
        /// `interruption-level`. Default: "time-sensitive" for incoming, nil for the stop-ringing types.
        var interruptionLevel: String?
        /// `category` in `aps` (the event's `category` wins). Default: "INCOMING_CALL" / "CALL_ENDED".
        package var category: String?

        init(title: String, body: String, interruptionLevel: String? = nil, category: String? = nil) {
            self.title = title
            self.body = body
            self.interruptionLevel = interruptionLevel
            self.category = category
        }
    }

    /// Send every push under this bundle id instead of the event's `topic`. Default: nil (use the event's).
    package var bundleIDOverride: String? = nil
    /// When set, events whose bundle id is not listed are dead-lettered (`topic_not_allowed`). Default: nil (any).
    package var allowedBundleIDs: Set<String>? = nil
    /// Alert content per event type. Default: incoming "Incoming call" (time-sensitive, INCOMING_CALL);
    /// hangup "Call ended", missed "Missed call", answered_elsewhere "Answered on another device" (CALL_ENDED).
    package var alerts: [CallEventType: AlertDefaults] = [
        .incoming: AlertDefaults(
            title: "Incoming call", body: "Incoming call", interruptionLevel: "time-sensitive", category: "INCOMING_CALL"
        ),
        .hangup: AlertDefaults(title: "Call ended", body: "Call ended", category: "CALL_ENDED"),
        .missed: AlertDefaults(title: "Missed call", body: "Missed call", category: "CALL_ENDED"),
        .answeredElsewhere: AlertDefaults(
            title: "Call answered", body: "Answered on another device", category: "CALL_ENDED"
        ),
    ]
    /// Alert content per bundle id, for the event types it lists, instead of ``alerts`` (per-app categories, default
    /// texts and loc keys; `apns.apps[].mapping` in `callpush run`'s config file). Default: empty (every app uses
    /// ``alerts``).
    package var appAlerts: [String: [CallEventType: AlertDefaults]] = [:]
    /// `aps.sound` for alert pushes when the event has none. Default: nil (the extension plays the ringtone).
    package var sound: String? = nil
    /// Incoming pushes expire at the ring deadline (`created_at/1000 + ring_timeout_s`), so a phone that comes
    /// online after the call ended never rings. When false, no `apns-expiration` header. Default: true.
    var expireAtRingDeadline: Bool = true
    /// Lifetime of stop-ringing pushes (hangup/missed/answered_elsewhere) after `created_at` (whole seconds), so
    /// the "Call ended" banner can still replace a stored incoming one. nil: no `apns-expiration`. Default: 10 minutes.
    var stopPushLifetime: Duration? = .seconds(600)
    /// Put `apns-collapse-id = call_id` on alert pushes (the hang-up banner replaces the incoming one). Default: true.
    var collapseAlertsByCallID: Bool = true
    /// Use `event_id` as `apns-id` when it is a UUID (lowercased). Default: true.
    var eventIDAsAPNsID: Bool = true
    /// Custom keys that collide with keys the mapper writes are skipped (and reported) when false, or make the
    /// event fail with `reserved_custom_key` when true. Default: false (skip: a stray key must not stop a call).
    var rejectReservedCustomKeys: Bool = false
    /// Add an empty `aps` dictionary to VoIP payloads (PushKit hands the whole dictionary to the app and needs
    /// none). Default: false.
    var voipIncludesEmptyAps: Bool = false

    package init() {}

    /// The alert defaults for `type` (falls back to the hangup defaults, then a generic text).
    package func alertDefaults(for type: CallEventType) -> AlertDefaults {
        alerts[type] ?? alerts[.hangup] ?? AlertDefaults(title: "Call ended", body: "Call ended")
    }

    /// The alert defaults for `type` in the app `bundleID`: its own from ``appAlerts`` when it has them.
    package func alertDefaults(for type: CallEventType, bundleID: String) -> AlertDefaults {
        if !appAlerts.isEmpty, let own = appAlerts[bundleID]?[type] { return own }
        return alertDefaults(for: type)
    }
}
