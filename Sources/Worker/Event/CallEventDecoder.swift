import APNs

/// A specialised decoder for the call event shape (docs/integration.md, "Call event") that makes no `String` per
/// field: the event keeps the record's bytes and where each text field is in them (``JSONSpan``).
///
/// It scans the UTF-8 bytes once with a strict RFC 8259 scanner, in any key order (the documented order costs one
/// compare per key, any other a scan of the key), ignoring unknown keys (which are still validated), then checks the
/// fields in a fixed order, so the reported reason does not depend on key order. Rules:
/// - required strings: `event_id`, `type`, `call_id`, `device_token`, `push`, `topic`, `environment`;
///   absent or `null` → `missing_field:<name>`, not a string → `wrong_type:<name>`, `event_id`/`call_id`/`topic`
///   empty → `empty_field:<name>`.
/// - `created_at` (required) and `ring_timeout_s` (optional, default
///   ``Configuration/defaultRingTimeout``): whole numbers (`30`, `30.0`, `3e1` alike); one outside the field's range,
///   however large, is `bad_created_at` / `bad_ring_timeout`.
/// - optional: `caller {name,id}`, `alert {title,subtitle,body}`, `category`, `sound`, `custom {}`; `null` is the
///   same as absent; unknown keys inside `caller`/`alert` are ignored.
/// - `custom` is kept as raw JSON members (validated), duplicates resolved last-wins.
///
/// Thread-safe: a value type with no shared state.
package struct CallEventDecoder: Sendable {
    /// Decoder limits.
    package struct Configuration: Sendable, Hashable {
        /// Largest record value accepted, in bytes. Default: 16384.
        var maximumEventSize: Int = 16384
        /// Deepest nesting accepted (the event object is depth 1). Default: 32.
        var maximumNestingDepth: Int = 32
        /// Accepted `ring_timeout_s` values. Default: 1...600.
        var ringTimeoutRange: ClosedRange<Int> = 1...600
        /// Used when `ring_timeout_s` is absent or null (whole seconds). Default: 30 seconds.
        var defaultRingTimeout: Duration = .seconds(30)

        package init() {}
    }

    package var configuration: Configuration

    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Decodes one record value.
    /// - Throws: ``EventDecodingError`` with a precise reason code.
    package func decode(_ bytes: [UInt8]) throws(EventDecodingError) -> CallEvent {
        guard bytes.count <= configuration.maximumEventSize else {
            throw EventDecodingError(
                .eventTooLarge,
                "event is \(bytes.count) bytes, at most \(configuration.maximumEventSize) allowed"
            )
        }
        var fields = Fields()
        let depth = configuration.maximumNestingDepth
        let syntaxError: JSONSyntaxError? = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer: buffer, maximumDepth: depth)
            do throws(JSONSyntaxError) {
                try Self.scan(&scanner, into: &fields)
                return nil
            } catch {
                return error
            }
        }
        if let syntaxError {
            switch syntaxError.kind {
            case .tooDeep:
                throw EventDecodingError(.nestingTooDeep, "nested deeper than \(depth) at byte \(syntaxError.offset)")
            case .syntax:
                throw EventDecodingError(.invalidJSON, "\(syntaxError.message) at byte \(syntaxError.offset)")
            }
        }
        return try validate(fields, text: bytes)
    }

    // MARK: - Scanning

    enum Slot: Sendable {
        case absent
        /// A string, where it is in the record value.
        case string(JSONSpan)
        case number(JSONNumber)
        /// An object member scanned in place (caller, alert, custom).
        case object
        case wrongType
    }

    /// A string field with a fixed set of values (`type`, `push`, `environment`), matched on its bytes: no `String`
    /// is made for it.
    enum Choice<Value: Sendable>: Sendable {
        case absent
        case value(Value)
        /// A string, but none of the values.
        case unknown
        case wrongType
    }

    struct Fields {
        var isObject = false
        var eventID = Slot.absent, callID = Slot.absent, deviceToken = Slot.absent, topic = Slot.absent
        var type = Choice<CallEventType>.absent, push = Choice<CallPushKind>.absent
        var environment = Choice<CallEnvironment>.absent
        var createdAt = Slot.absent, ringTimeout = Slot.absent
        var category = Slot.absent, sound = Slot.absent
        var caller = Slot.absent, callerName = Slot.absent, callerID = Slot.absent
        var alert = Slot.absent, alertTitle = Slot.absent, alertSubtitle = Slot.absent, alertBody = Slot.absent
        var custom = Slot.absent
        var customFields = CustomFields()
    }

    static func scan(_ scanner: inout JSONScanner, into fields: inout Fields) throws(JSONSyntaxError) {
        scanner.skipByteOrderMark()
        scanner.skipWhitespace()
        if scanner.peek() == UInt8(ascii: "{") {
            fields.isObject = true
            // Keys are matched in the order docs/integration.md lists them first (one compare when the producer
            // writes that order, as most do), then by scanning.
            var expected: TopKey? = .eventID
            var more = try scanner.openObject(depth: 1)
            while more {
                scanner.skipWhitespace()
                let key: TopKey?
                if let next = expected, scanner.consumeKey(next.quoted) {
                    key = next
                } else {
                    key = TopKey(try scanner.readMemberKey())
                }
                try scanner.enterValue()
                expected = key?.next
                switch key {
                case .eventID: fields.eventID = try readString(&scanner)
                case .type: fields.type = try readChoice(&scanner, Self.eventType)
                case .callID: fields.callID = try readString(&scanner)
                case .deviceToken: fields.deviceToken = try readString(&scanner)
                case .push: fields.push = try readChoice(&scanner, Self.pushKind)
                case .topic: fields.topic = try readString(&scanner)
                case .environment: fields.environment = try readChoice(&scanner, Self.environment)
                case .createdAt: fields.createdAt = try readNumber(&scanner)
                case .ringTimeout: fields.ringTimeout = try readNumber(&scanner)
                case .category: fields.category = try readString(&scanner)
                case .sound: fields.sound = try readString(&scanner)
                case .caller:
                    fields.callerName = .absent
                    fields.callerID = .absent
                    fields.caller = try readObject(&scanner) { (scanner, key) throws(JSONSyntaxError) in
                        if key.equals("name") {
                            fields.callerName = try readString(&scanner)
                        } else if key.equals("id") {
                            fields.callerID = try readString(&scanner)
                        } else {
                            try scanner.skipValue(depth: 2)
                        }
                    }
                case .alert:
                    fields.alertTitle = .absent
                    fields.alertSubtitle = .absent
                    fields.alertBody = .absent
                    fields.alert = try readObject(&scanner) { (scanner, key) throws(JSONSyntaxError) in
                        if key.equals("title") {
                            fields.alertTitle = try readString(&scanner)
                        } else if key.equals("subtitle") {
                            fields.alertSubtitle = try readString(&scanner)
                        } else if key.equals("body") {
                            fields.alertBody = try readString(&scanner)
                        } else {
                            try scanner.skipValue(depth: 2)
                        }
                    }
                case .custom:
                    fields.customFields = CustomFields()
                    fields.custom = try readObject(&scanner) { (scanner, key) throws(JSONSyntaxError) in
                        let range = try scanner.skipValue(depth: 2)
                        let raw = [UInt8](UnsafeBufferPointer(rebasing: scanner.buffer[range]))
                        fields.customFields.set(CustomFields.Member(key: key.string, rawValue: raw))
                    }
                case nil:
                    try scanner.skipValue(depth: 1)
                }
                more = try scanner.nextMember()
            }
        } else {
            try scanner.skipValue(depth: 0)
        }
        scanner.skipWhitespace()
        guard scanner.isAtEnd else { throw scanner.error("trailing characters") }
    }

    /// The event's top-level keys, matched on their bytes (length first).
    private enum TopKey: Int {
        // In docs/integration.md's order.
        case eventID, type, callID, deviceToken, push, topic, environment, createdAt, ringTimeout, caller, alert
        case category, sound, custom

        /// The key as it stands in the JSON text, quotes included.
        var quoted: StaticString {
            switch self {
            case .eventID: #""event_id""#
            case .type: #""type""#
            case .callID: #""call_id""#
            case .deviceToken: #""device_token""#
            case .push: #""push""#
            case .topic: #""topic""#
            case .environment: #""environment""#
            case .createdAt: #""created_at""#
            case .ringTimeout: #""ring_timeout_s""#
            case .caller: #""caller""#
            case .alert: #""alert""#
            case .category: #""category""#
            case .sound: #""sound""#
            case .custom: #""custom""#
            }
        }

        /// The key after this one in docs/integration.md's order.
        var next: TopKey? { TopKey(rawValue: rawValue + 1) }

        init?(_ key: JSONKey) {
            let match: TopKey?
            switch key.count {
            case 4: match = key.equals("type") ? .type : key.equals("push") ? .push : nil
            case 5: match = key.equals("topic") ? .topic : key.equals("sound") ? .sound : key.equals("alert") ? .alert : nil
            case 6: match = key.equals("caller") ? .caller : key.equals("custom") ? .custom : nil
            case 7: match = key.equals("call_id") ? .callID : nil
            case 8: match = key.equals("event_id") ? .eventID : key.equals("category") ? .category : nil
            case 10: match = key.equals("created_at") ? .createdAt : nil
            case 11: match = key.equals("environment") ? .environment : nil
            case 12: match = key.equals("device_token") ? .deviceToken : nil
            case 14: match = key.equals("ring_timeout_s") ? .ringTimeout : nil
            default: match = nil
            }
            guard let match else { return nil }
            self = match
        }
    }

    private static func readString(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> Slot {
        guard scanner.peek() == UInt8(ascii: "\"") else { return try readOther(&scanner, absent: .absent, wrongType: .wrongType) }
        return .string(try scanner.readSpan())
    }

    private static func readChoice<Value>(_ scanner: inout JSONScanner, _ match: (JSONKey) -> Value?)
        throws(JSONSyntaxError) -> Choice<Value>
    {
        guard scanner.peek() == UInt8(ascii: "\"") else { return try readOther(&scanner, absent: .absent, wrongType: .wrongType) }
        return match(try scanner.readKey()).map { .value($0) } ?? .unknown
    }

    private static func eventType(_ text: JSONKey) -> CallEventType? {
        switch text.count {
        case 6: text.equals("hangup") ? .hangup : text.equals("missed") ? .missed : nil
        case 8: text.equals("incoming") ? .incoming : nil
        case 18: text.equals("answered_elsewhere") ? .answeredElsewhere : nil
        default: nil
        }
    }

    private static func pushKind(_ text: JSONKey) -> CallPushKind? {
        text.equals("alert") ? .alert : text.equals("voip") ? .voip : nil
    }

    private static func environment(_ text: JSONKey) -> CallEnvironment? {
        text.equals("production") ? .production : text.equals("sandbox") ? .sandbox : nil
    }

    private static func readNumber(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> Slot {
        switch scanner.peek() ?? 0 {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try scanner.readNumber())
        default: return try readOther(&scanner, absent: .absent, wrongType: .wrongType)
        }
    }

    private static func readObject(
        _ scanner: inout JSONScanner,
        _ member: (inout JSONScanner, JSONKey) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) -> Slot {
        guard scanner.peek() == UInt8(ascii: "{") else { return try readOther(&scanner, absent: .absent, wrongType: .wrongType) }
        try scanner.forEachMember(depth: 2, member)
        return .object
    }

    /// A member whose value is not of the expected kind: `absent` for `null`, else the value is skipped (and still
    /// validated) and it is `wrongType`.
    private static func readOther<Result>(_ scanner: inout JSONScanner, absent: Result, wrongType: Result)
        throws(JSONSyntaxError) -> Result
    {
        if scanner.peek() == UInt8(ascii: "n") {
            try scanner.readLiteral("null")
            return absent
        }
        try scanner.skipValue(depth: 1)
        return wrongType
    }

    // MARK: - Validation (fixed order)

    private func validate(_ fields: Fields, text: [UInt8]) throws(EventDecodingError) -> CallEvent {
        guard fields.isObject else { throw EventDecodingError(.notAnObject, "the event must be a JSON object") }
        let eventID = try Self.requiredString(fields.eventID, "event_id", allowEmpty: false)
        let type = try Self.requiredChoice(
            fields.type, "type", EventDecodingError(.unknownType, "type must be incoming, hangup, missed or answered_elsewhere"))
        let callID = try Self.requiredString(fields.callID, "call_id", allowEmpty: false)
        let tokenText = try Self.requiredString(fields.deviceToken, "device_token", allowEmpty: true)
        let deviceToken: DeviceToken
        do {
            deviceToken = try tokenText.isEscaped
                ? DeviceToken(tokenText.string(in: text))
                : text.withUnsafeBufferPointer { (bytes) throws(APNsRequestError) in
                    try DeviceToken(utf8: UnsafeBufferPointer(rebasing: bytes[tokenText.range]))
                }
        } catch {
            throw EventDecodingError(.badDeviceToken, error.message)
        }
        let push = try Self.requiredChoice(fields.push, "push", EventDecodingError(.unknownPush, "push must be alert or voip"))
        let topic = try Self.requiredString(fields.topic, "topic", allowEmpty: false)
        let environment = try Self.requiredChoice(
            fields.environment, "environment", EventDecodingError(.unknownEnvironment, "environment must be production or sandbox"))
        if case .absent = fields.createdAt {
            throw EventDecodingError(.missingField("created_at"), "created_at is required")
        }
        let createdAt = try Self.integer(fields.createdAt, "created_at")
        guard createdAt >= 0 else { throw EventDecodingError(.badCreatedAt, "created_at must not be negative") }
        guard createdAt <= CallEvent.latestCreatedAtMilliseconds else {
            throw EventDecodingError(
                .badCreatedAt, "created_at must be milliseconds since the epoch before the year 10000, got \(createdAt)")
        }
        let ringTimeout: Int
        if case .absent = fields.ringTimeout {
            ringTimeout = Int(configuration.defaultRingTimeout.components.seconds)
        } else {
            let value = try Self.integer(fields.ringTimeout, "ring_timeout_s")
            let range = configuration.ringTimeoutRange
            guard value >= Int64(range.lowerBound), value <= Int64(range.upperBound) else {
                throw EventDecodingError(.badRingTimeout, "ring_timeout_s must be in \(range), got \(value)")
            }
            ringTimeout = Int(value)
        }
        try Self.objectSlot(fields.caller, "caller")
        let callerName = try Self.optionalString(fields.callerName, "caller.name")
        let callerID = try Self.optionalString(fields.callerID, "caller.id")
        try Self.objectSlot(fields.alert, "alert")
        let alertTitle = try Self.optionalString(fields.alertTitle, "alert.title")
        let alertSubtitle = try Self.optionalString(fields.alertSubtitle, "alert.subtitle")
        let alertBody = try Self.optionalString(fields.alertBody, "alert.body")
        let spans = CallEvent.Spans(
            eventID: eventID, callID: callID, topic: topic, callerName: callerName, callerID: callerID,
            alertTitle: alertTitle, alertSubtitle: alertSubtitle, alertBody: alertBody,
            category: try Self.optionalString(fields.category, "category"),
            sound: try Self.optionalString(fields.sound, "sound")
        )
        try Self.objectSlot(fields.custom, "custom")
        return CallEvent(
            text: text, spans: spans, type: type, deviceToken: deviceToken, push: push, environment: environment,
            createdAtMilliseconds: createdAt, ringTimeoutSeconds: ringTimeout, custom: fields.customFields
        )
    }

    private static func requiredString(_ slot: Slot, _ name: String, allowEmpty: Bool) throws(EventDecodingError)
        -> JSONSpan
    {
        switch slot {
        case .absent: throw EventDecodingError(.missingField(name), "\(name) is required")
        case .string(let value):
            guard allowEmpty || !value.isEmpty else {
                throw EventDecodingError(.emptyField(name), "\(name) must not be empty")
            }
            return value
        default: throw EventDecodingError(.wrongType(name), "\(name) must be a string")
        }
    }

    private static func requiredChoice<Value>(
        _ choice: Choice<Value>, _ name: String, _ unknown: @autoclosure () -> EventDecodingError
    ) throws(EventDecodingError) -> Value {
        switch choice {
        case .value(let value): return value
        case .absent: throw EventDecodingError(.missingField(name), "\(name) is required")
        case .unknown: throw unknown()
        case .wrongType: throw EventDecodingError(.wrongType(name), "\(name) must be a string")
        }
    }

    private static func optionalString(_ slot: Slot, _ name: String) throws(EventDecodingError) -> JSONSpan? {
        switch slot {
        case .absent: return nil
        case .string(let value): return value
        default: throw EventDecodingError(.wrongType(name), "\(name) must be a string or null")
        }
    }

    private static func objectSlot(_ slot: Slot, _ name: String) throws(EventDecodingError) {
        if case .wrongType = slot { throw EventDecodingError(.wrongType(name), "\(name) must be an object or null") }
    }

    private static func integer(_ slot: Slot, _ name: String) throws(EventDecodingError) -> Int64 {
        guard case .number(let number) = slot, let value = number.wholeNumber else {
            throw EventDecodingError(.wrongType(name), "\(name) must be a whole number")
        }
        return value
    }
}
