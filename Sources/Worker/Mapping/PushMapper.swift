package import APNs

/// Maps a ``CallEvent`` to an ``APNsRequest`` as below, with a hand-written payload encoder (no Foundation on the
/// hot path). The event is docs/integration.md's "Call event"; the headers' rules are in docs/apns.md.
///
/// Alert pushes (`push: alert`): `apns-push-type: alert`, priority 10, collapse id = call id, payload
/// `{"pushType":1|2,"callId":…,"caller":{…},"aps":{"alert":{…},"mutable-content":1,"category":…,
/// "interruption-level":…}}` plus `custom` members at the top level (`pushType` 1 = incoming, 2 = every
/// stop-ringing type).
///
/// VoIP pushes (`push: voip`): `apns-push-type: voip`, topic `<bundle>.voip`, priority 10, no collapse id,
/// call fields at the top level and no `aps` (PushKit hands the whole dictionary to the app):
/// `{"pushType":…,"type":…,"callId":…,"eventId":…,"createdAt":…,"ringDeadline":…,"caller":{…}}` + custom.
///
/// Expiration: incoming → the ring deadline (`created_at/1000 + ring_timeout_s`) when
/// ``MappingConfiguration/expireAtRingDeadline``; stop-ringing → `created_at/1000 +`
/// ``MappingConfiguration/stopPushLifetime``.
///
/// Thread-safe: an immutable value.
package struct PushMapper: Sendable {
    package let configuration: MappingConfiguration
    private let alerts: AlertDefaultsTable

    package init(configuration: MappingConfiguration = MappingConfiguration()) {
        self.configuration = configuration
        alerts = AlertDefaultsTable(configuration)
    }

    /// Keys written at the top level of alert payloads; `custom` may not use them.
    static let reservedAlertKeys: Set<String> = ["aps", "pushType", "callId", "caller"]
    /// Keys written at the top level of VoIP payloads; `custom` may not use them.
    static let reservedVoIPKeys: Set<String> = [
        "aps", "pushType", "type", "callId", "eventId", "createdAt", "ringDeadline", "caller",
    ]

    /// The `custom` keys of `event` that ``map(_:)`` leaves out because it writes them itself (counted by the worker),
    /// in the event's order; with ``MappingConfiguration/rejectReservedCustomKeys`` it refuses the event instead.
    func skippedCustomKeys(of event: CallEvent) -> [String] {
        guard !event.custom.members.isEmpty else { return [] }
        let reserved = event.push == .voip ? Self.reservedVoIPKeys : Self.reservedAlertKeys
        return event.custom.members.map(\.key).filter(reserved.contains)
    }

    /// The APNs request for `event`: ready to send, already checked against APNs' shape rules and size limits.
    /// - Throws: ``PushMappingError`` (dead-letter reason in its code).
    package func map(_ event: CallEvent) throws(PushMappingError) -> APNsRequest {
        let bundleID = configuration.bundleIDOverride ?? event.topic
        if let allowed = configuration.allowedBundleIDs, !allowed.contains(bundleID) {
            throw PushMappingError(.topicNotAllowed, "bundle id \(bundleID) is not allowed")
        }
        let pushType: APNsPushType = event.push == .voip ? .voip : .alert
        let reserved = event.push == .voip ? Self.reservedVoIPKeys : Self.reservedAlertKeys
        if configuration.rejectReservedCustomKeys, let key = skippedCustomKeys(of: event).first {
            throw PushMappingError(.reservedCustomKey, "custom key \(key) is reserved")
        }
        let payload = event.push == .voip ? voipPayload(event, reserved: reserved) : alertPayload(event, bundleID: bundleID)
        let expiration: APNsExpiration
        let createdAtSeconds = event.createdAtMilliseconds / 1000
        if event.type == .incoming {
            expiration =
                configuration.expireAtRingDeadline ? .at(secondsSinceEpoch: createdAtSeconds + Int64(event.ringTimeoutSeconds)) : .none
        } else if let lifetime = configuration.stopPushLifetime {
            expiration = .at(secondsSinceEpoch: createdAtSeconds + lifetime.components.seconds)
        } else {
            expiration = .none
        }
        do {
            return try APNsRequest(
                deviceToken: event.deviceToken,
                pushType: pushType,
                topic: pushType.topic(forBundleID: bundleID),
                payload: payload,
                priority: .immediate,
                expiration: expiration,
                collapseID: event.push == .alert && configuration.collapseAlertsByCallID ? event.callID : nil,
                apnsID: configuration.eventIDAsAPNsID ? Self.apnsID(of: event) : nil
            )
        } catch {
            throw PushMappingError(error)
        }
    }

    /// `event`'s id as an `apns-id` when it is a canonical UUID (either case), else nil; read on the record's bytes.
    private static func apnsID(of event: CallEvent) -> APNsID? {
        let span = event.spans.eventID
        guard !span.isEscaped else { return APNsID(event.eventID) }
        return event.text.withUnsafeBufferPointer { APNsID(utf8: UnsafeBufferPointer(rebasing: $0[span.range])) }
    }

    // MARK: - Payloads

    /// The alert payload bytes for `event` (custom members merged, reserved keys skipped).
    package func alertPayload(_ event: CallEvent) -> [UInt8] {
        alertPayload(event, bundleID: configuration.bundleIDOverride ?? event.topic)
    }

    private func alertPayload(_ event: CallEvent, bundleID: String) -> [UInt8] {
        JSONWriter.bytes(capacity: 512) { writeAlertPayload(event, bundleID: bundleID, to: &$0) }
    }

    private func writeAlertPayload(_ event: CallEvent, bundleID: String, to writer: inout JSONWriter) {
        let alert = alerts.entry(for: event.type, bundleID: bundleID)
        writer.appendLiteral(event.type == .incoming ? #"{"pushType":1,"callId":"# : #"{"pushType":2,"callId":"#)
        event.write(event.spans.callID, to: &writer)
        appendCaller(event, to: &writer)
        writer.appendLiteral(#","aps":{"alert":{"#)
        let spans = event.spans
        var first = true
        if !spans.hasAlertText {
            let callerName = spans.callerName.flatMap { $0.isEmpty ? nil : $0 }
            if alert.titleFromCallerName, let callerName {
                appendMember("title", callerName, of: event, &first, &writer)
            } else {
                appendMember("title", alert.title, &first, &writer)
            }
            if let subtitle = alert.subtitle { appendMember("subtitle", subtitle, &first, &writer) }
            appendMember("body", alert.body, &first, &writer)
            let locArgs = alert.callerNameAsLocArgs ? callerName : nil
            if let key = alert.titleLocKey {
                appendMember("title-loc-key", key, &first, &writer)
                if let locArgs { appendArrayMember("title-loc-args", locArgs, of: event, &writer) }
            }
            if let key = alert.locKey {
                appendMember("loc-key", key, &first, &writer)
                if let locArgs { appendArrayMember("loc-args", locArgs, of: event, &writer) }
            }
        } else {
            if let title = spans.alertTitle { appendMember("title", title, of: event, &first, &writer) }
            if let subtitle = spans.alertSubtitle { appendMember("subtitle", subtitle, of: event, &first, &writer) }
            if let body = spans.alertBody { appendMember("body", body, of: event, &first, &writer) }
        }
        writer.appendLiteral(#"},"mutable-content":1"#)
        if let category = spans.category {
            writer.appendLiteral(#","category":"#)
            event.write(category, to: &writer)
        } else if let category = alert.category {
            writer.appendLiteral(#","category":"#)
            writer.appendRaw(category)
        }
        if let level = alert.interruptionLevel {
            writer.appendLiteral(#","interruption-level":"#)
            writer.appendRaw(level)
        }
        if let sound = event.spans.sound {
            writer.appendLiteral(#","sound":"#)
            event.write(sound, to: &writer)
        } else if let sound = alerts.sound {
            writer.appendLiteral(#","sound":"#)
            writer.appendRaw(sound)
        }
        writer.appendByte(UInt8(ascii: "}"))
        appendCustom(event.custom, reserved: Self.reservedAlertKeys, to: &writer)
        writer.appendByte(UInt8(ascii: "}"))
    }

    /// The VoIP payload bytes for `event`.
    func voipPayload(_ event: CallEvent) -> [UInt8] { voipPayload(event, reserved: Self.reservedVoIPKeys) }

    private func voipPayload(_ event: CallEvent, reserved: Set<String>) -> [UInt8] {
        JSONWriter.bytes(capacity: 512) { writeVoIPPayload(event, reserved: reserved, to: &$0) }
    }

    private func writeVoIPPayload(_ event: CallEvent, reserved: Set<String>, to writer: inout JSONWriter) {
        writer.appendLiteral(event.type == .incoming ? #"{"pushType":1,"type":"# : #"{"pushType":2,"type":"#)
        writer.appendString(event.type.rawValue)
        writer.appendLiteral(#","callId":"#)
        event.write(event.spans.callID, to: &writer)
        writer.appendLiteral(#","eventId":"#)
        event.write(event.spans.eventID, to: &writer)
        writer.appendLiteral(#","createdAt":"#)
        writer.appendInt(event.createdAtMilliseconds)
        writer.appendLiteral(#","ringDeadline":"#)
        writer.appendInt(event.ringDeadlineMilliseconds)
        appendCaller(event, to: &writer)
        if configuration.voipIncludesEmptyAps { writer.appendLiteral(#","aps":{}"#) }
        appendCustom(event.custom, reserved: reserved, to: &writer)
        writer.appendByte(UInt8(ascii: "}"))
    }

    private func appendCaller(_ event: CallEvent, to writer: inout JSONWriter) {
        let name = event.spans.callerName, id = event.spans.callerID
        guard name != nil || id != nil else { return }
        writer.appendLiteral(#","caller":{"#)
        var first = true
        if let name { appendMember("name", name, of: event, &first, &writer) }
        if let id { appendMember("id", id, of: event, &first, &writer) }
        writer.appendByte(UInt8(ascii: "}"))
    }

    private func appendCustom(_ custom: CustomFields, reserved: Set<String>, to writer: inout JSONWriter) {
        for member in custom.members where !reserved.contains(member.key) {
            writer.appendByte(UInt8(ascii: ","))
            writer.appendString(member.key)
            writer.appendByte(UInt8(ascii: ":"))
            writer.appendRaw(member.rawValue)
        }
    }

    /// A member whose value is a JSON string written before (``AlertDefaultsTable/json(_:)``).
    @inline(__always)
    private func appendMember(_ key: StaticString, _ json: [UInt8], _ first: inout Bool, _ writer: inout JSONWriter) {
        appendKey(key, &first, &writer)
        writer.appendRaw(json)
    }

    /// A member whose value is the event's text at `span`.
    @inline(__always)
    private func appendMember(
        _ key: StaticString, _ span: JSONSpan, of event: CallEvent, _ first: inout Bool, _ writer: inout JSONWriter
    ) {
        appendKey(key, &first, &writer)
        event.write(span, to: &writer)
    }

    @inline(__always)
    private func appendKey(_ key: StaticString, _ first: inout Bool, _ writer: inout JSONWriter) {
        writer.appendSeparator(&first)
        writer.appendByte(UInt8(ascii: "\""))
        writer.appendLiteral(key)
        writer.appendLiteral(#"":"#)
    }

    private func appendArrayMember(_ key: StaticString, _ span: JSONSpan, of event: CallEvent, _ writer: inout JSONWriter) {
        writer.appendLiteral(#",""#)
        writer.appendLiteral(key)
        writer.appendLiteral(#"":["#)
        event.write(span, to: &writer)
        writer.appendByte(UInt8(ascii: "]"))
    }
}
