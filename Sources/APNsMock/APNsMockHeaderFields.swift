import HTTP2

/// The request fields the validator looks at, found in one pass over the header block's bytes, and whether any
/// regular header appeared twice. Holds byte ranges of the block (no copies, no strings): valid only inside the
/// `HTTP2RawHeaderBlock.withFields` call it was made in.
struct APNsMockHeaderFields {
    typealias Bytes = UnsafeBufferPointer<UInt8>

    var method: Bytes?
    var path: Bytes?
    var authorization: Bytes?
    var pushType: Bytes?
    var topic: Bytes?
    var priority: Bytes?
    var expiration: Bytes?
    var collapseID: Bytes?
    var apnsID: Bytes?
    var hasDuplicate = false

    private enum Field { case authorization, pushType, topic, priority, expiration, collapseID, apnsID }

    init(_ fields: HTTP2RawHeaderBlock.Fields) {
        var iterator = fields.makeIterator()
        while let (name, value) = iterator.next() {
            if name.first == UInt8(ascii: ":") {
                // Pseudo-headers: the first of each counts (nghttp2 refuses requests that repeat one).
                if APNsMockBytes.equal(name, ":method") {
                    if method == nil { method = value }
                } else if APNsMockBytes.equal(name, ":path") {
                    if path == nil { path = value }
                }
                continue
            }
            guard let field = Self.field(named: name) else {
                // A name the validator does not read: only a later copy of it can make it a duplicate.
                if !hasDuplicate {
                    var rest = iterator
                    while !hasDuplicate, let (later, _) = rest.next() {
                        hasDuplicate = APNsMockBytes.equalIgnoringASCIICase(later, name)
                    }
                }
                continue
            }
            set(field, value)
        }
    }

    private mutating func set(_ field: Field, _ value: Bytes) {
        func store(_ slot: inout Bytes?) {
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
    private static func field(named name: Bytes) -> Field? {
        switch name.count {
        case 7: return APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-id") ? .apnsID : nil
        case 10: return APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-topic") ? .topic : nil
        case 13:
            if APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "authorization") { return .authorization }
            return APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-priority") ? .priority : nil
        case 14: return APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-push-type") ? .pushType : nil
        case 15: return APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-expiration") ? .expiration : nil
        case 16: return APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-collapse-id") ? .collapseID : nil
        default: return nil
        }
    }
}
