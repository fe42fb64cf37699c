/// Writes the header fields of a response straight into the connection's header encoder: no `HTTP2Header`, no
/// array, and (with ``add(_:valueCount:neverIndex:_:)``) no `String` for a value made on the spot. Valid only inside
/// the closure it is passed to (``HTTP2ServerResponder/respond(status:body:fields:)``). Names must be lowercase.
public struct HTTP2HeaderWriter {
    let encoder: NGHTTP2HeaderEncoder

    /// Adds `name: value`; `neverIndex` as in ``HTTP2Header``.
    public func add(_ name: StaticString, _ value: String, neverIndex: Bool = false) {
        encoder.add(name, value, neverIndex: neverIndex)
    }

    /// Adds `name` with a value of `count` bytes that `fill` writes (it must write all of them).
    public func add(_ name: StaticString, valueCount count: Int, neverIndex: Bool = false,
                    _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        encoder.add(name, valueCount: count, neverIndex: neverIndex, fill)
    }
}
