/// The `apns-push-type` header value, with the topic suffix and payload limit each type implies.
package struct APNsPushType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) { self.rawValue = rawValue }

    package static let alert = Self(rawValue: "alert")
    package static let background = Self(rawValue: "background")
    package static let voip = Self(rawValue: "voip")
    static let location = Self(rawValue: "location")
    static let complication = Self(rawValue: "complication")
    static let fileprovider = Self(rawValue: "fileprovider")
    package static let mdm = Self(rawValue: "mdm")
    static let liveactivity = Self(rawValue: "liveactivity")
    static let pushtotalk = Self(rawValue: "pushtotalk")
    static let widgets = Self(rawValue: "widgets")
    static let controls = Self(rawValue: "controls")

    /// Every push type APNs documents.
    package static let all: [Self] = [
        .alert, .background, .voip, .location, .complication, .fileprovider, .mdm, .liveactivity, .pushtotalk,
        .widgets, .controls,
    ]

    /// The suffix APNs expects on the bundle id in `apns-topic` (empty for alert/background; nil for mdm,
    /// whose topic comes from the certificate).
    package var topicSuffix: String? {
        // Alert first: a push type is a string, and the switch compares it with each case in turn (it ran three
        // times per event, nine comparisons each, for the worker's alerts).
        if self == .alert { return "" }
        return switch self {
        case .voip: ".voip"
        case .location: ".location-query"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        case .mdm: nil
        default: ""
        }
    }

    /// `bundleID` with this type's suffix (unchanged if it already ends with it).
    package func topic(forBundleID bundleID: String) -> String {
        guard let suffix = topicSuffix, !suffix.isEmpty, !bundleID.hasSuffix(suffix) else { return bundleID }
        return bundleID + suffix
    }

    /// The largest payload APNs accepts for this type, in bytes: 5120 for VoIP, 4096 for everything else.
    package var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }

    /// Whether `priority` is allowed for this type (background: 5 only; liveactivity: 5 or 10).
    package func allows(_ priority: APNsPriority) -> Bool {
        switch self {
        case .background: priority == .conservePower
        case .liveactivity, .location: priority == .immediate || priority == .conservePower
        default: true
        }
    }

    package var description: String { rawValue }
}
