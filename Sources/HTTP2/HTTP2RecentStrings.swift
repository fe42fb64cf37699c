@preconcurrency import Glibc

/// The header strings of the previous request on a server connection, by position (`:path`, `:method`, `:scheme`,
/// `:authority`, then each regular header's name and value in arrival order). Clients repeat most of them on every
/// request (an APNs provider sends the same `authorization`, topic and push type, often the same path), so a
/// repeated field reuses the previous `String`: a byte comparison instead of an allocation, a UTF-8 validation and
/// a later free. Loop-thread only (one per connection).
struct HTTP2RecentStrings {
    /// The slot of the first regular header's name; its value is the next slot.
    static let firstHeaderSlot = 4
    /// Fields beyond this many slots are decoded without reuse.
    static let maximumSlots = 64

    private var strings: [String] = []

    /// `bytes` as a String: the one in `slot` when it has the same bytes, else a new one that takes the slot.
    mutating func string(_ bytes: UnsafePointer<UInt8>, _ count: Int, slot: Int) -> String {
        if slot < strings.count {
            var recent = strings[slot]
            let same = recent.utf8.count == count
                && (count == 0 || recent.withUTF8 { memcmp($0.baseAddress!, bytes, count) == 0 })
            if same { return recent }
        }
        let fresh = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        if slot < strings.count {
            strings[slot] = fresh
        } else if slot == strings.count, slot < Self.maximumSlots {
            strings.append(fresh)
        }
        return fresh
    }
}
