/// A mapping's alert defaults resolved once per ``PushMapper``: one shared entry per event type, and per app that
/// has its own. Looking the defaults up per event copied a ``MappingConfiguration/AlertDefaults`` (seven strings:
/// an atomic retain and release each) out of two hashed dictionaries for every push.
///
/// Thread-safe: immutable.
final class AlertDefaultsTable: Sendable {
    /// One event type's defaults; callers read its fields in place (`entry.defaults.title`), never copying the whole.
    final class Entry: Sendable {
        let defaults: MappingConfiguration.AlertDefaults

        init(_ defaults: MappingConfiguration.AlertDefaults) { self.defaults = defaults }
    }

    /// Indexed like `CallEventType.allCases`.
    private let common: [Entry]
    private let apps: [String: [Entry]]

    init(_ configuration: MappingConfiguration) {
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
