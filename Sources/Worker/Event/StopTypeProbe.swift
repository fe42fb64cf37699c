import Glibc

/// Tells, without decoding, whether an event's JSON may be a stop event (`hangup`, `missed`, `answered_elsewhere`):
/// backlog and history scans decode only those (a scan reads incoming calls too, and decoding one costs several
/// times this look at its quotes and backslashes, which `memchr` finds; docs/performance.md, "Backlog and history
/// scans").
///
/// Exact in one direction: an event that decodes to a stop type contains its type's name between two quotes
/// (`"hangup"`, …), unless the value is written with `\u` escapes, which this also answers true for. It may answer
/// true for other events (a caller named "missed", an escaped quote before a name); the decoder then decides.
enum StopTypeProbe {
    /// The stop types' names, each with its closing quote.
    private static let names: [[UInt8]] = CallEventType.allCases.filter(\.stopsRinging).map { Array("\($0.rawValue)\"".utf8) }

    static func mayStopRinging(_ json: [UInt8]) -> Bool {
        let names = Self.names
        return json.withUnsafeBytes { bytes in
            guard let start = bytes.baseAddress else { return false }
            let end = start + bytes.count
            // A `\u` escape anywhere (an escaped backslash is passed over as a pair).
            var at = start
            while at < end, let backslash = memchr(at, Int32(UInt8(ascii: "\\")), end - at) {
                let next = UnsafeRawPointer(backslash) + 1
                if next < end && next.load(as: UInt8.self) == UInt8(ascii: "u") { return true }
                at = next + 1
            }
            // A quote followed by a stop type's name and its closing quote.
            at = start
            while at < end, let quote = memchr(at, Int32(UInt8(ascii: "\"")), end - at) {
                at = UnsafeRawPointer(quote) + 1
                guard at < end else { break }
                let first = at.load(as: UInt8.self)
                for name in names where name[0] == first && end - at >= name.count {
                    if name.withUnsafeBytes({ memcmp(at, $0.baseAddress!, name.count) }) == 0 { return true }
                }
            }
            return false
        }
    }
}
