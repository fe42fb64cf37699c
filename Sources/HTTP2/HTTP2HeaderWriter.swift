/// Writes the header fields of a response or request straight into the connection's header encoder: no
/// `HTTP2Header`, no array, and (with ``add(_:valueCount:indexing:_:)``) no `String` for a value made on the spot.
/// Valid only inside the call it is passed to (``HTTP2ServerResponder/respond(status:body:fields:)``,
/// ``HTTP2ClientStream/writeHeaderFields(_:)``). Names must be lowercase.
public struct HTTP2HeaderWriter {
    /// How a field may enter the HPACK dynamic tables of both ends.
    package enum Indexing: Sendable {
        /// As the encoder decides (nghttp2 indexes most fields).
        case allowed
        /// Literal never indexed (``HTTP2Header/neverIndex``): for secrets and per-request values.
        case never
        /// A per-response value that is not secret (a response id): never indexed, except the connection's first
        /// field of that name, which enters the tables so that later ones send the name as a one-byte index.
        case perResponse
    }

    let encoder: NGHTTP2HeaderEncoder

    package init(encoder: NGHTTP2HeaderEncoder) {
        self.encoder = encoder
    }

    /// Adds `name: value`; `neverIndex` as in ``HTTP2Header``.
    package func add(_ name: StaticString, _ value: String, neverIndex: Bool = false) {
        encoder.add(name, value, neverIndex: neverIndex)
    }

    /// A field whose name and value are both fixed text (neither is copied).
    package func add(_ name: StaticString, _ value: StaticString, neverIndex: Bool = false) {
        encoder.add(name, value, neverIndex: neverIndex)
    }

    /// A field whose value is `value` in decimal, written in place.
    package func add(_ name: StaticString, decimal value: Int64, indexing: Indexing = .allowed) {
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: an Int64's 19 digits and its sign
        withUnsafeMutableBytes(of: &scratch) { scratch in
            var magnitude = value.magnitude
            var start = scratch.count
            repeat {
                start -= 1
                scratch[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                scratch[start] = UInt8(ascii: "-")
            }
            let digits = UnsafeRawBufferPointer(rebasing: scratch[start...])
            add(name, valueCount: digits.count, indexing: indexing) { UnsafeMutableRawBufferPointer($0).copyMemory(from: digits) }
        }
    }

    /// Adds `name` with a value of `count` bytes that `fill` writes (it must write all of them).
    package func add(_ name: StaticString, valueCount count: Int, indexing: Indexing = .allowed,
                    _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        encoder.add(name, valueCount: count, indexing: indexing, fill)
    }
}
