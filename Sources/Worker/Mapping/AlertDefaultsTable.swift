/// A mapping's alert defaults resolved once per ``PushMapper``: one shared entry per event type, and per app that
/// has its own. Looking the defaults up per event copied a ``MappingConfiguration/AlertDefaults`` (seven strings:
/// an atomic retain and release each) out of two hashed dictionaries for every push.
///
/// Thread-safe: immutable.
final class AlertDefaultsTable: Sendable {
    /// One event type's defaults as a payload uses them: its choices, and its texts as the JSON strings a payload
    /// writes (quoted and escaped once, not per push). Callers read its fields in place, never copying the whole.
    final class Entry: Sendable {
        /// ``MappingConfiguration/AlertDefaults/titleFromCallerName``.
        let titleFromCallerName: Bool
        /// ``MappingConfiguration/AlertDefaults/callerNameAsLocArgs``.
        let callerNameAsLocArgs: Bool
        let title: [UInt8]
        let subtitle: [UInt8]?
        let body: [UInt8]
        let titleLocKey: [UInt8]?
        let locKey: [UInt8]?
        let category: [UInt8]?
        let interruptionLevel: [UInt8]?

        init(_ defaults: MappingConfiguration.AlertDefaults) {
            titleFromCallerName = defaults.titleFromCallerName
            callerNameAsLocArgs = defaults.callerNameAsLocArgs
            title = AlertDefaultsTable.json(defaults.title)
            subtitle = defaults.subtitle.map(AlertDefaultsTable.json)
            body = AlertDefaultsTable.json(defaults.body)
            titleLocKey = defaults.titleLocKey.map(AlertDefaultsTable.json)
            locKey = defaults.locKey.map(AlertDefaultsTable.json)
            category = defaults.category.map(AlertDefaultsTable.json)
            interruptionLevel = defaults.interruptionLevel.map(AlertDefaultsTable.json)
        }
    }

    /// `text` as a quoted, escaped JSON string, as ``JSONWriter/appendString(_:)`` writes it.
    static func json(_ text: String) -> [UInt8] {
        JSONWriter.bytes(capacity: text.utf8.count + 2) { $0.appendString(text) }
    }

    /// Indexed like `CallEventType.allCases`.
    private let common: [Entry]
    private let apps: [String: [Entry]]
    /// ``MappingConfiguration/sound`` as a JSON string.
    let sound: [UInt8]?

    init(_ configuration: MappingConfiguration) {
        sound = configuration.sound.map(Self.json)
        common = CallEventType.allCases.map { Entry(configuration.alertDefaults(for: $0)) }
        var apps: [String: [Entry]] = [:]
        for bundleID in configuration.appAlerts.keys {
            apps[bundleID] = CallEventType.allCases.map { Entry(configuration.alertDefaults(for: $0, bundleID: bundleID)) }
        }
        self.apps = apps
    }

    /// The defaults for `type` in the app `bundleID` (as ``MappingConfiguration/alertDefaults(for:bundleID:)``).
    func entry(for type: CallEventType, bundleID: String) -> Entry {
        let index = Self.index(of: type)
        if !apps.isEmpty, let own = apps[bundleID] { return own[index] }
        return common[index]
    }

    /// `type`'s position in `CallEventType.allCases` (every value of the enum is one of them).
    private static func index(of type: CallEventType) -> Int {
        CallEventType.allCases.firstIndex(of: type) ?? 0
    }
}
