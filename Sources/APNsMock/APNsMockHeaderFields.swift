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

    init(_ fields: HTTP2RawHeaderBlock.Fields) {
        var iterator = fields.makeIterator()
        while let (name, value) = iterator.next() {
            if name.first == UInt8(ascii: ":") {
                // Pseudo-headers: the first of each counts (nghttp2 refuses requests that repeat one).
                if method == nil, APNsMockBytes.equal(name, ":method") {
                    method = value
                } else if path == nil, APNsMockBytes.equal(name, ":path") {
                    path = value
                }
                continue
            }
            // The fields the validator reads, by length first so most names cost one comparison (ASCII case ignored).
            switch name.count {
            case 7 where APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-id"):
                Self.store(value, in: &apnsID, duplicate: &hasDuplicate)
            case 10 where APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-topic"):
                Self.store(value, in: &topic, duplicate: &hasDuplicate)
            case 13 where APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "authorization"):
                Self.store(value, in: &authorization, duplicate: &hasDuplicate)
            case 13 where APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-priority"):
                Self.store(value, in: &priority, duplicate: &hasDuplicate)
            case 14 where APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-push-type"):
                Self.store(value, in: &pushType, duplicate: &hasDuplicate)
            case 15 where APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-expiration"):
                Self.store(value, in: &expiration, duplicate: &hasDuplicate)
            case 16 where APNsMockBytes.equalIgnoringASCIICase(name, lowercase: "apns-collapse-id"):
                Self.store(value, in: &collapseID, duplicate: &hasDuplicate)
            default:
                // A name the validator does not read: only a later copy of it can make it a duplicate.
                var rest = iterator
                while !hasDuplicate, let (later, _) = rest.next() {
                    hasDuplicate = later.count == name.count && APNsMockBytes.equalIgnoringASCIICase(later, name)
                }
            }
        }
    }

    private static func store(_ value: Bytes, in slot: inout Bytes?, duplicate: inout Bool) {
        if slot == nil { slot = value } else { duplicate = true }
    }
}
