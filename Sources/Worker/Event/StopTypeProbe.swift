/// Tells, without decoding, whether an event's JSON may be a stop event (`hangup`, `missed`, `answered_elsewhere`):
/// a backlog scan decodes only those (most of a backlog is incoming calls, and decoding one costs about 10 000
/// instructions against a few hundred for this look at its quotes and backslashes).
///
/// Exact in one direction: an event that decodes to a stop type contains its type's name as a JSON string literal
/// (`"hangup"`, …), unless the value is written with `\u` escapes, which this also answers true for. It may answer
/// true for an incoming call (a caller named "missed"); the decoder then decides.
enum StopTypeProbe {
    /// The stop types' names, each with its closing quote.
    private static let names: [[UInt8]] = CallEventType.allCases.filter(\.stopsRinging).map { Array("\($0.rawValue)\"".utf8) }

    static func mayStopRinging(_ json: [UInt8]) -> Bool {
        json.withUnsafeBufferPointer { bytes in
            var index = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"):
                    if index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "u") { return true }
                    index += 2
                    continue
                case UInt8(ascii: "\""):
                    let rest = bytes[(index + 1)...]
                    if names.contains(where: { rest.starts(with: $0) }) { return true }
                default:
                    break
                }
                index += 1
            }
            return false
        }
    }
}
