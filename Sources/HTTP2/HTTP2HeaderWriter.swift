/// Writes the header fields of a response straight into the connection's header encoder: no `HTTP2Header`, no
/// array, and (with ``add(_:valueCount:indexing:_:)``) no `String` for a value made on the spot. Valid only inside
/// the closure it is passed to (``HTTP2ServerResponder/respond(status:body:fields:)``). Names must be lowercase.
public struct HTTP2HeaderWriter {
    /// How a field may enter the HPACK dynamic tables of both ends.
    public enum Indexing: Sendable {
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
    public func add(_ name: StaticString, _ value: String, neverIndex: Bool = false) {
        encoder.add(name, value, neverIndex: neverIndex)
    }

    /// Adds `name` with a value of `count` bytes that `fill` writes (it must write all of them).
    public func add(_ name: StaticString, valueCount count: Int, indexing: Indexing = .allowed,
                    _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        encoder.add(name, valueCount: count, indexing: indexing, fill)
    }
}
