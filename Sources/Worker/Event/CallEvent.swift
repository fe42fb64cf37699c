package import APNs

/// One call event from the `calls` topic (docs/integration.md, "Call event"), decoded and validated.
///
/// The event keeps the record value it was decoded from and reads its text fields there (``JSONSpan``): decoding makes
/// no `String` per field, copying the event retains a few references (the text, the token, the call key's strings, the
/// custom members) rather than one per field, and the payload and receipt writers copy the fields' bytes straight from
/// the record. The `String` accessors (``callID``, ``caller``, …) decode on each call.
///
/// Build one with ``CallEventDecoder`` from the record value bytes, or from values with
/// ``init(eventID:type:callID:deviceToken:push:topic:environment:createdAtMilliseconds:ringTimeoutSeconds:caller:alert:category:sound:custom:decoder:)``.
package struct CallEvent: Sendable, Equatable {
    /// Who is calling.
    package struct Caller: Sendable, Hashable {
        package var name: String?
        package var id: String?
        package init(name: String? = nil, id: String? = nil) {
            self.name = name
            self.id = id
        }
    }

    /// Optional per-event overrides of the alert texts.
    package struct AlertText: Sendable, Hashable {
        package var title: String?
        var subtitle: String?
        package var body: String?
        package init(title: String? = nil, subtitle: String? = nil, body: String? = nil) {
            self.title = title
            self.subtitle = subtitle
            self.body = body
        }
    }

    /// Where the event's text fields are in ``text``; optional ones are nil when absent or `null`.
    struct Spans: Sendable {
        var eventID: JSONSpan
        var callID: JSONSpan
        var topic: JSONSpan
        var callerName: JSONSpan?
        var callerID: JSONSpan?
        var alertTitle: JSONSpan?
        var alertSubtitle: JSONSpan?
        var alertBody: JSONSpan?
        var category: JSONSpan?
        var sound: JSONSpan?

        var hasAlertText: Bool { alertTitle != nil || alertSubtitle != nil || alertBody != nil }
    }

    /// The record value the event was decoded from.
    let text: [UInt8]
    let spans: Spans
    /// What identifies the call across its events: its app (``topic``) and its ``callID``, made once when the event
    /// is decoded (the call tracker, the mapper and the logs read them as `String`s).
    let callKey: CallKey
    package var type: CallEventType
    package var deviceToken: DeviceToken
    var push: CallPushKind
    package var environment: CallEnvironment
    /// Set by the producer, milliseconds since the epoch.
    var createdAtMilliseconds: Int64
    /// The call rings until `createdAt + ringTimeout`.
    var ringTimeoutSeconds: Int
    /// Extra keys merged at the top level of the payload, kept as validated raw JSON.
    package var custom: CustomFields

    init(
        text: [UInt8], spans: Spans, type: CallEventType, deviceToken: DeviceToken, push: CallPushKind,
        environment: CallEnvironment, createdAtMilliseconds: Int64, ringTimeoutSeconds: Int, custom: CustomFields
    ) {
        self.text = text
        self.spans = spans
        callKey = CallKey(topic: spans.topic.string(in: text), callID: spans.callID.string(in: text))
        self.type = type
        self.deviceToken = deviceToken
        self.push = push
        self.environment = environment
        self.createdAtMilliseconds = createdAtMilliseconds
        self.ringTimeoutSeconds = ringTimeoutSeconds
        self.custom = custom
    }

    /// The event these values make, checked as a record's would be: they are written as the event's JSON and decoded
    /// with `decoder`.
    /// - Throws: ``EventDecodingError`` for values a record could not carry (an empty call id, a ring timeout out of
    ///   the decoder's range, …).
    package init(
        eventID: String,
        type: CallEventType,
        callID: String,
        deviceToken: DeviceToken,
        push: CallPushKind,
        topic: String,
        environment: CallEnvironment,
        createdAtMilliseconds: Int64,
        ringTimeoutSeconds: Int,
        caller: Caller = Caller(),
        alert: AlertText = AlertText(),
        category: String? = nil,
        sound: String? = nil,
        custom: CustomFields = CustomFields(),
        decoder: CallEventDecoder = CallEventDecoder()
    ) throws(EventDecodingError) {
        var writer = JSONWriter()
        let strings: [(StaticString, String)] = [
            (#"{"event_id":"#, eventID), (#","type":"#, type.rawValue), (#","call_id":"#, callID),
            (#","device_token":"#, deviceToken.hex), (#","push":"#, push.rawValue), (#","topic":"#, topic),
            (#","environment":"#, environment.rawValue),
        ]
        for (key, value) in strings {
            writer.appendLiteral(key)
            writer.appendString(value)
        }
        writer.appendLiteral(#","created_at":"#)
        writer.appendInt(createdAtMilliseconds)
        writer.appendLiteral(#","ring_timeout_s":"#)
        writer.appendInt(Int64(ringTimeoutSeconds))
        let optionalStrings: [(StaticString, String?)] = [
            (#","caller":{"name":"#, caller.name), (#","id":"#, caller.id), (#"},"alert":{"title":"#, alert.title),
            (#","subtitle":"#, alert.subtitle), (#","body":"#, alert.body), (#"},"category":"#, category),
            (#","sound":"#, sound),
        ]
        for (key, value) in optionalStrings {
            writer.appendLiteral(key)
            writer.appendStringOrNull(value)
        }
        writer.appendLiteral(#","custom":"#)
        custom.write(to: &writer)
        writer.appendByte(UInt8(ascii: "}"))
        self = try decoder.decode(writer.finish())
    }

    /// Unique per event; used as `apns-id` when it is a UUID.
    var eventID: String { spans.eventID.string(in: text) }
    /// Ordering key and `apns-collapse-id`.
    package var callID: String { callKey.callID }
    /// The bundle id (without `.voip`).
    package var topic: String { callKey.topic }
    package var caller: Caller { Caller(name: string(spans.callerName), id: string(spans.callerID)) }
    package var alert: AlertText {
        AlertText(title: string(spans.alertTitle), subtitle: string(spans.alertSubtitle), body: string(spans.alertBody))
    }
    package var category: String? { string(spans.category) }
    package var sound: String? { string(spans.sound) }

    private func string(_ span: JSONSpan?) -> String? { span.map { $0.string(in: text) } }

    /// Appends the text field at `span` to `writer` as a JSON string.
    func write(_ span: JSONSpan, to writer: inout JSONWriter) { writer.appendString(span, of: text) }

    /// The latest `created_at` the decoder accepts: 9999-12-31T23:59:59.999Z. A producer writing microseconds
    /// (1.7e15 today) gets its events dead-lettered with that reason, rather than every one counted as created ahead
    /// of the worker's clock (``CreationTimeBound``). (Nanoseconds exceed the JSON-exact 2^53.)
    static let latestCreatedAtMilliseconds: Int64 = 253_402_300_799_999

    /// `created_at + ring_timeout_s`, in milliseconds since the epoch: after this the push is useless.
    var ringDeadlineMilliseconds: Int64 {
        createdAtMilliseconds &+ Int64(ringTimeoutSeconds) &* 1000
    }

    /// Events are equal when their values are, whatever record text they were read from.
    package static func == (lhs: CallEvent, rhs: CallEvent) -> Bool {
        lhs.type == rhs.type && lhs.push == rhs.push && lhs.environment == rhs.environment
            && lhs.createdAtMilliseconds == rhs.createdAtMilliseconds && lhs.ringTimeoutSeconds == rhs.ringTimeoutSeconds
            && lhs.deviceToken == rhs.deviceToken && lhs.eventID == rhs.eventID && lhs.callID == rhs.callID
            && lhs.topic == rhs.topic && lhs.caller == rhs.caller && lhs.alert == rhs.alert
            && lhs.category == rhs.category && lhs.sound == rhs.sound && lhs.custom == rhs.custom
    }
}
