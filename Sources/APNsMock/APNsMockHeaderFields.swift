import HTTP2

/// The request headers the validator looks at, found in one pass over the header list, and whether any regular
/// header appeared twice. Holds the request's own strings (no copies, no case-converted names).
struct APNsMockHeaderFields {
    var authorization: String?
    var pushType: String?
    var topic: String?
    var priority: String?
    var expiration: String?
    var collapseID: String?
    var apnsID: String?
    var hasDuplicate = false

    private enum Field { case authorization, pushType, topic, priority, expiration, collapseID, apnsID }

    init(_ headers: [HTTP2Header]) {
        for (position, header) in headers.enumerated() where header.name.utf8.first != UInt8(ascii: ":") {
            guard let field = Self.field(named: header.name) else {
                // A name the validator does not read: only a later copy of it can make it a duplicate.
                if !hasDuplicate {
                    hasDuplicate = headers[(position + 1)...].contains {
                        APNsMockBytes.equalIgnoringASCIICase($0.name, header.name)
                    }
                }
                continue
            }
            set(field, header.value)
        }
    }

    private mutating func set(_ field: Field, _ value: String) {
        func store(_ slot: inout String?) {
            if slot == nil { slot = value } else { hasDuplicate = true }
        }
        switch field {
        case .authorization: store(&authorization)
        case .pushType: store(&pushType)
        case .topic: store(&topic)
        case .priority: store(&priority)
        case .expiration: store(&expiration)
        case .collapseID: store(&collapseID)
        case .apnsID: store(&apnsID)
        }
    }

    /// The field a header name stands for (ASCII case ignored), by length first so most names cost one compare.
    private static func field(named name: String) -> Field? {
        let candidates: (String, Field, String?, Field?)
        switch name.utf8.count {
        case 7: candidates = ("apns-id", .apnsID, nil, nil)
        case 10: candidates = ("apns-topic", .topic, nil, nil)
        case 13: candidates = ("authorization", .authorization, "apns-priority", .priority)
        case 14: candidates = ("apns-push-type", .pushType, nil, nil)
        case 15: candidates = ("apns-expiration", .expiration, nil, nil)
        case 16: candidates = ("apns-collapse-id", .collapseID, nil, nil)
        default: return nil
        }
        if APNsMockBytes.equalIgnoringASCIICase(name, candidates.0) { return candidates.1 }
        if let other = candidates.2, APNsMockBytes.equalIgnoringASCIICase(name, other) { return candidates.3 }
        return nil
    }
}
