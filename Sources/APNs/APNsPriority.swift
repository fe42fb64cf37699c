/// The `apns-priority` header: 10 send now, 5 when convenient for the device, 1 never wake it.
package struct APNsPriority: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: Int

    package init?(rawValue: Int) {
        guard [1, 5, 10].contains(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(unchecked rawValue: Int) { self.rawValue = rawValue }

    package static let immediate = Self(unchecked: 10)
    package static let conservePower = Self(unchecked: 5)
    static let doNotAwaken = Self(unchecked: 1)

    /// The header value: a literal for each of the three values (no integer formatting per push on the event loop).
    package var description: String {
        switch rawValue {
        case 10: "10"
        case 5: "5"
        case 1: "1"
        default: String(rawValue)
        }
    }
}
