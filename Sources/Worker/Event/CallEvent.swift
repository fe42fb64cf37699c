public import APNs

/// One call event from the `calls` topic (docs/integration.md, "Call event"), decoded and validated.
///
/// Build one with ``CallEventDecoder`` from the record value bytes, or with the memberwise initialiser in tests.
public struct CallEvent: Sendable, Hashable {
    /// Who is calling.
    public struct Caller: Sendable, Hashable {
        public var name: String?
        public var id: String?
        public init(name: String? = nil, id: String? = nil) {
            self.name = name
            self.id = id
        }
    }

    /// Optional per-event overrides of the alert texts.
    public struct AlertText: Sendable, Hashable {
        public var title: String?
        var subtitle: String?
        public var body: String?
        public init(title: String? = nil, subtitle: String? = nil, body: String? = nil) {
            self.title = title
            self.subtitle = subtitle
            self.body = body
        }
        var isEmpty: Bool { title == nil && subtitle == nil && body == nil }
    }

    /// Unique per event; used as `apns-id` when it is a UUID.
    var eventID: String
    public var type: CallEventType
    /// Ordering key and `apns-collapse-id`.
    public var callID: String
    public var deviceToken: DeviceToken
    var push: CallPushKind
    /// The bundle id (without `.voip`).
    public var topic: String
    public var environment: CallEnvironment
    /// Set by the producer, milliseconds since the epoch.
    var createdAtMilliseconds: Int64
    /// The call rings until `createdAt + ringTimeout`.
    var ringTimeoutSeconds: Int
    public var caller: Caller
    public var alert: AlertText
    public var category: String?
    public var sound: String?
    /// Extra keys merged at the top level of the payload, kept as validated raw JSON.
    public var custom: CustomFields

    public init(
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
        custom: CustomFields = CustomFields()
    ) {
        self.eventID = eventID
        self.type = type
        self.callID = callID
        self.deviceToken = deviceToken
        self.push = push
        self.topic = topic
        self.environment = environment
        self.createdAtMilliseconds = createdAtMilliseconds
        self.ringTimeoutSeconds = ringTimeoutSeconds
        self.caller = caller
        self.alert = alert
        self.category = category
        self.sound = sound
        self.custom = custom
    }

    /// The latest `created_at` the decoder accepts: 9999-12-31T23:59:59.999Z. A producer writing microseconds
    /// (1.7e15 today) gets its events dead-lettered with that reason, rather than every one counted as created ahead
    /// of the worker's clock (``CreationTimeBound``). (Nanoseconds exceed the JSON-exact 2^53.)
    static let latestCreatedAtMilliseconds: Int64 = 253_402_300_799_999

    /// What identifies the call across its events: its app (``topic``) and its ``callID``.
    var callKey: CallKey { CallKey(topic: topic, callID: callID) }

    /// `created_at + ring_timeout_s`, in milliseconds since the epoch: after this the push is useless.
    var ringDeadlineMilliseconds: Int64 {
        createdAtMilliseconds &+ Int64(ringTimeoutSeconds) &* 1000
    }
}
